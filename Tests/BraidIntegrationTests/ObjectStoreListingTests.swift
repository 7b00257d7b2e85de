import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// A listing from a store that lies: the test server answers every page request of bucket `b` with one document.
/// Each lie ends the listing with a one-line error, never a loop, a crash or a file.
@Suite("S3 listings from a hostile store")
struct ObjectStoreListingTests {
    /// Lists `s3://b/p/` from a server that answers every page with `document`; the error, and how many requests
    /// the server answered.
    static func listing(_ document: String, faults: [TestServer.Fault] = []) async throws -> (BraidError?, Int) {
        let server = TestServer(routes: [
            "/b/": .init(document: .init(bytes: Array(document.utf8), contentType: "application/xml"), faults: faults)
        ])
        try server.start()
        defer { server.shutdown() }
        let store = ObjectStore(endpoint: String(server.url("/").dropLast()))
        var options = DownloadOptions()
        options.maximumAttempts = 2
        var failure: BraidError?
        do throws(BraidError) {
            _ = try await store.objects(in: "b", prefix: "p/", options: options, pageSize: 2)
        } catch {
            failure = error
        }
        #expect(server.waitUntilIdle())
        return (failure, server.requestLog.count)
    }

    static func list(_ document: String, faults: [TestServer.Fault] = []) async throws -> BraidError? {
        try await listing(document, faults: faults).0
    }

    static let object = "<Contents><Key>p/a</Key><Size>1</Size></Contents>"

    @Test("a store that never stops paging, repeating its token, is stopped at the repeat")
    func repeatedToken() async throws {
        let (error, requests) = try await Self.listing(
            "<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>same</NextContinuationToken>"
                + Self.object + "</ListBucketResult>")
        #expect(error?.message == "the listing of s3://b/p/ repeats the continuation token 'same'")
        #expect(requests == 2)
        #expect(error?.code == .protocolViolation)
    }

    @Test("a key outside the prefix is refused: it has no path below the directory")
    func keyOutsidePrefix() async throws {
        let error = try await Self.list(
            "<ListBucketResult><Contents><Key>../p/a</Key><Size>1</Size></Contents></ListBucketResult>")
        #expect(error?.message.contains("lists the key '../p/a', which does not start with the prefix") == true)
    }

    @Test("a DTD is refused, its entities never expanded")
    func documentType() async throws {
        let error = try await Self.list(
            """
            <?xml version="1.0"?><!DOCTYPE l [<!ENTITY x SYSTEM "file:///etc/passwd">]>
            <ListBucketResult><Contents><Key>&x;</Key><Size>1</Size></Contents></ListBucketResult>
            """)
        #expect(error?.message.contains("declares a DTD") == true, "\(error?.message ?? "accepted")")
    }

    @Test("a refusal without an error document says its status, and what would help")
    func refusalWithoutDocument() async throws {
        let error = try await Self.list("<html>no</html>", faults: [.status(403, retryAfter: nil)])
        #expect(error?.message.hasPrefix("listing s3://b/p/: HTTP 403") == true, "\(error?.message ?? "")")
        #expect(error?.remedies == [.objectStoreCredentials])
        #expect(error?.httpStatus == 403)
    }

    @Test("a busy store is asked again, then the listing fails with its status")
    func busyStore() async throws {
        let (error, requests) = try await Self.listing("<html>busy</html>", faults: [.status(503, retryAfter: 0)])
        #expect(error?.message == "listing s3://b/p/: HTTP 503", "\(error?.message ?? "")")
        #expect(requests == 2, "maximumAttempts")
    }
}
