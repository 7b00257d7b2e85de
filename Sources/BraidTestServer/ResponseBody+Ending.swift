extension ResponseBody {
    /// What the server does after the last body byte.
    enum Ending {
        /// The body is finished (with the final chunk when chunked).
        case complete
        /// Nothing more is sent, and the connection stays open until the client or a shutdown closes it.
        case stall
        /// The connection is closed, whether or not the body was complete.
        case close
    }
}
