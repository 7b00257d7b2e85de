import COnDemand

/// A library Braid loads the first time a download needs it, not at every start (`COnDemand`): with their own
/// dependencies, libxml2 and libarchive would cost every run about 1.5 ms before its first request.
enum OnDemandLibrary {
    /// libxml2, for Metalink documents and S3 listings.
    case xml2
    /// libarchive, for unpacking an archive as it downloads.
    case archive

    /// Loads the library, or says why it cannot, naming what it is needed for.
    func load(for purpose: String) throws(BraidError) {
        var reason = [CChar](repeating: 0, count: 256)
        let loaded =
            switch self {
            case .xml2: braid_load_xml2(&reason, reason.count)
            case .archive: braid_load_archive(&reason, reason.count)
            }
        guard loaded == 0 else { return }
        let why = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        throw BraidError.localIO("cannot load \(self) \(purpose): \(why)")
    }
}

extension OnDemandLibrary: CustomStringConvertible {
    var description: String {
        switch self {
        case .xml2: "libxml2"
        case .archive: "libarchive"
        }
    }
}
