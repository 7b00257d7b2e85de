extension DownloadQueue {
    /// The downloads not running, in order: the first is taken most often, and a thousand-file list takes each one
    /// from the front, so taking the first moves nothing (the taken places are reused once half the storage is).
    struct Line: Sequence {
        private var storage: [ID] = []
        /// Where the line begins in `storage`.
        private var head = 0

        var count: Int { storage.count - head }
        var ids: [ID] { Array(storage[head...]) }

        subscript(index: Int) -> ID { storage[head + index] }

        func firstIndex(of id: ID) -> Int? { storage[head...].firstIndex(of: id).map { $0 - head } }

        mutating func append(_ id: ID) { storage.append(id) }

        mutating func insertFirst(_ id: ID) {
            if head > 0 {
                head -= 1
                storage[head] = id
            } else {
                storage.insert(id, at: 0)
            }
        }

        mutating func remove(at index: Int) {
            guard index > 0 else {
                head += 1
                if head * 2 >= storage.count {
                    storage.removeFirst(head)
                    head = 0
                }
                return
            }
            storage.remove(at: head + index)
        }

        /// The downloads of `ids` that are in line take the places they hold there, in the order of `ids` (the
        /// first time each is named); the rest keep theirs.
        mutating func order(_ ids: [ID]) {
            var named = Set<ID>()
            let ids = ids.filter { named.insert($0).inserted }
            let places = storage.indices.dropFirst(head).filter { named.contains(storage[$0]) }
            let inLine = Set(places.map { storage[$0] })
            for (place, id) in zip(places, ids.filter(inLine.contains)) { storage[place] = id }
        }

        mutating func removeAll() {
            storage.removeAll()
            head = 0
        }

        func makeIterator() -> ArraySlice<ID>.Iterator { storage[head...].makeIterator() }
    }
}
