import Testing

@testable import Braid

/// A manager's lanes hold its caps together, and a starting download takes the lane that runs the fewest.
@Suite("pool lanes")
struct PoolLanesTests {
    @Test("two lanes split the caps so that together they are the manager's, an odd one included")
    func capsSplit() {
        let lanes = PoolLanes(maximumConnections: 47, maximumPerHost: 15, lanes: 2)
        #expect(lanes.lanes.map(\.budget.maximumPerHost) == [8, 7])
        #expect(lanes.lanes.map(\.budget.maximumConnections) == [24, 23])
        #expect(lanes.lanes.map(\.pool.limits.maximumConnectionsPerHost) == [8, 7])
        #expect(lanes.lanes.map(\.pool.limits.maximumConnections) == [24, 23])
    }

    @Test("caps under 8 keep one lane with all of them")
    func smallCapsOneLane() {
        let lanes = PoolLanes(maximumConnections: 48, maximumPerHost: 4)
        #expect(lanes.lanes.count == 1)
        #expect(lanes.lanes[0].budget.maximumPerHost == 4)
    }

    @Test("a starting download takes the lane running the fewest, the first of equals")
    func leastBusyFirst() {
        let lanes = PoolLanes(maximumConnections: 48, maximumPerHost: 16, lanes: 2)
        // One at a time: always the first lane, whose connections the next reuses.
        let alone = lanes.enter()
        lanes.leave(alone)
        let next = lanes.enter()
        #expect(alone.index == 0 && next.index == 0)
        // Several at once: spread.
        let second = lanes.enter()
        let third = lanes.enter()
        #expect(second.index == 1 && third.index == 0)
        lanes.leave(next)
        lanes.leave(third)
        #expect(lanes.enter().index == 0, "lane 0 runs none, lane 1 one")
    }

    @Test("a lane spreads one way at a time: segments on their pool, or a connection a request on its own")
    func spreadsOneWayAtATime() {
        let lane = PoolLanes(maximumConnections: 16, maximumPerHost: 8, lanes: 1).lanes[0]
        #expect(lane.segments.limits.maximumConnectionsPerHost == 7, "one left for the lane's shared connection")
        guard let first = lane.segments.take(), let second = lane.segments.take() else {
            Issue.record("no pool for spread segments")
            return
        }
        #expect(first === second, "downloads spreading at once share the pool")
        #expect(!lane.segments.laneMayCarry(1), "a connection a request beside spread segments would pass the caps")
        #expect(lane.segments.laneMayCarry(StreamsPerConnection.unlimited))
        lane.segments.give()
        #expect(!lane.segments.laneMayCarry(1))
        lane.segments.give()
        // None left: the lane may give each request a connection, and the pool goes, closing its connections.
        #expect(lane.segments.laneMayCarry(1))
        #expect(lane.segments.take() == nil, "while it does, segments stay on the lane's pool")
        #expect(lane.segments.laneMayCarry(StreamsPerConnection.unlimited))
        guard let again = lane.segments.take() else {
            Issue.record("no pool once the lane shares its connections again")
            return
        }
        #expect(again !== first, "a pool made afresh")
        lane.segments.give()
        // Kept for the next spread download, connections and all, while the lane shares its connections.
        #expect(lane.segments.take() === again)
        lane.segments.give()
    }
}
