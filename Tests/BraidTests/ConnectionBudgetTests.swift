import Testing

@testable import Braid

@Suite("ConnectionBudget")
struct ConnectionBudgetTests {
    @Test("the per-host cap is strict, even for a download holding nothing")
    func strictPerHostCap() {
        let budget = ConnectionBudget(maximumConnections: 100, maximumPerHost: 2)
        let first = budget.register(host: "a")
        let second = budget.register(host: "a")
        #expect(budget.acquire(first))
        #expect(budget.acquire(second))
        #expect(!budget.acquire(first))
        #expect(!budget.acquire(second))
        #expect(budget.inUse == 2)
    }

    @Test("hosts are budgeted separately; the global cap covers them all")
    func globalCap() {
        let budget = ConnectionBudget(maximumConnections: 3, maximumPerHost: 2)
        let a = budget.register(host: "a")
        let b = budget.register(host: "b")
        #expect(budget.acquire(a) && budget.acquire(a))
        #expect(budget.acquire(b))
        #expect(!budget.acquire(b), "the global cap of 3 is reached")
        budget.release(a)
        #expect(budget.acquire(b))
    }

    @Test("a download at its fair share yields to a waiting one")
    func fairness() {
        let budget = ConnectionBudget(maximumConnections: 100, maximumPerHost: 4)
        let greedy = budget.register(host: "a")
        for _ in 0..<4 { #expect(budget.acquire(greedy)) }
        let late = budget.register(host: "a")
        #expect(!budget.acquire(late), "the host is full")
        budget.release(greedy)
        #expect(!budget.acquire(greedy), "greedy holds more than its share (2) while late waits")
        #expect(budget.acquire(late))
    }

    @Test("unregistering gives back what a download still holds")
    func unregister() {
        let budget = ConnectionBudget(maximumConnections: 10, maximumPerHost: 10)
        let ticket = budget.register(host: "a")
        #expect(budget.acquire(ticket) && budget.acquire(ticket))
        budget.unregister(ticket)
        #expect(budget.inUse == 0)
    }
}
