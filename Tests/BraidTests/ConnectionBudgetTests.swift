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

    @Test("connections beside a shared one leave it room, together, under both caps")
    func besideSharedConnection() {
        let budget = ConnectionBudget(maximumConnections: 100, maximumPerHost: 4)
        let spread = budget.register(host: "a", besideSharedConnection: true)
        let other = budget.register(host: "a", besideSharedConnection: true)
        #expect(budget.acquire(spread) && budget.acquire(spread))
        #expect(budget.acquire(other))
        #expect(!budget.acquire(other), "three of their own and the shared one fill the host's 4")
        #expect(!budget.acquire(spread))
        let shared = budget.register(host: "a")
        #expect(budget.acquire(shared), "a request on the shared connection still fits")
        #expect(budget.inUse == 4)
        budget.unregister(spread)
        #expect(budget.acquire(other), "what the first gave back is the others' again")
        let b = budget.register(host: "b", besideSharedConnection: true)
        #expect(budget.acquire(b), "another host has room of its own")

        let total = ConnectionBudget(maximumConnections: 2, maximumPerHost: 8)
        let one = total.register(host: "a", besideSharedConnection: true)
        #expect(total.acquire(one))
        #expect(!total.acquire(one), "the overall cap less the shared connection")
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
