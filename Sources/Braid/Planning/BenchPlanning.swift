/// What `braid bench` needs to know of the segment planner, to warn when a run is too short to give each of its
/// connections a range of its own. Not API (`package`).
package enum BenchPlanning {
    /// The smallest range the planner makes, in bytes: a shorter resource is never split.
    package static let minimumRange: Int64 = SegmentPlanner.minimumSegment

    /// How many ranges a download of `length` bytes over `connections` connections, with `piecesPerConnection`
    /// requests per connection, is planned in: fewer than `connections` leaves some connections idle.
    package static func rangeCount(length: Int64, connections: Int, piecesPerConnection: Int) -> Int {
        SegmentPlanner.plan(length: length, connections: connections, piecesPerConnection: piecesPerConnection).count
    }
}
