import ArgumentParser

/// `braid get URL`: the same download as `braid URL`, under a name of its own.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download URL, or the URLs listed in FILE (the same as `braid URL`).",
        discussion: """
            A list (-i FILE, or -i - for stdin) has one URL per line; tab-separated URLs on one line are mirrors \
            of the same file. Indented lines after a URL set its options: out=NAME (or SUB/NAME), dir=SUB (below \
            -d), checksum=ALG=HEX, connections=N|auto, header=Name: value, proxy=URL, limit-rate=RATE. '#' starts a \
            comment. A malformed line, or two entries saving the same file, stops the command before any download \
            (exit 2). Run the same command again to resume: complete files are verified and skipped.
            """
    )

    @OptionGroup var download: DownloadArguments

    func validate() throws {
        try download.validateSource()
    }

    func run() async throws {
        try await download.run()
    }
}
