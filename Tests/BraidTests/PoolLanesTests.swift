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
}
