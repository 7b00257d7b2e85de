extension BenchSchedule {
    /// One run of the schedule: which connection count, in which round.
    public struct Slot: Sendable, Equatable {
        /// The position of the run in the whole schedule, from 1.
        public var sequence: Int
        /// The round the run belongs to, from 1 to ``BenchSchedule/repeats``.
        public var round: Int
        /// The connection count the run uses.
        public var connections: Int

        /// A slot at position `sequence`, in round `round`, with `connections` connections.
        public init(sequence: Int, round: Int, connections: Int) {
            self.sequence = sequence
            self.round = round
            self.connections = connections
        }
    }
}
