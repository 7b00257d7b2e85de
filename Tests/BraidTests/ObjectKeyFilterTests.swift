import Testing

@testable import Braid

/// `--include` and `--exclude` as `huggingface-cli` (Python's fnmatch) and `s5cmd` users write them.
@Suite("object key filter")
struct ObjectKeyFilterTests {
    static let keys = [
        "config.json", "tokenizer.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
        "onnx/model.onnx", "onnx/config.json", "README.md", "[draft].md",
    ]

    static func kept(_ filter: ObjectKeyFilter) -> [String] {
        keys.filter(filter.keeps)
    }

    @Test("No pattern keeps every key")
    func noPatterns() {
        #expect(Self.kept(ObjectKeyFilter()) == Self.keys)
    }

    @Test("'*' matches across '/', as fnmatch without FNM_PATHNAME; '**' is the same")
    func starCrossesSlashes() {
        #expect(
            Self.kept(ObjectKeyFilter(includes: ["*.json"])) == ["config.json", "tokenizer.json", "onnx/config.json"])
        #expect(Self.kept(ObjectKeyFilter(includes: ["**/*.json"])) == ["onnx/config.json"])
        #expect(Self.kept(ObjectKeyFilter(includes: ["onnx/*"])) == ["onnx/model.onnx", "onnx/config.json"])
        #expect(Self.kept(ObjectKeyFilter(includes: ["onnx/**"])) == ["onnx/model.onnx", "onnx/config.json"])
    }

    @Test("Includes add up; an exclude wins over any include, whatever the order")
    func excludesWin() {
        #expect(
            Self.kept(ObjectKeyFilter(includes: ["*.safetensors", "config.json"]))
                == ["config.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"])
        #expect(
            Self.kept(ObjectKeyFilter(includes: ["*.json"], excludes: ["onnx/*"])) == ["config.json", "tokenizer.json"])
        #expect(Self.kept(ObjectKeyFilter(includes: ["config.json"], excludes: ["*.json"])) == [])
        #expect(
            Self.kept(ObjectKeyFilter(excludes: ["*.safetensors", "onnx/*", "*.md"])) == [
                "config.json", "tokenizer.json",
            ])
    }

    @Test("'?', classes, ranges, negation and escapes")
    func characterClasses() {
        #expect(Self.kept(ObjectKeyFilter(includes: ["model-0000?-of-00002.safetensors"])).count == 2)
        #expect(Self.kept(ObjectKeyFilter(includes: ["model-0000[2-9]-*"])) == ["model-00002-of-00002.safetensors"])
        #expect(Self.kept(ObjectKeyFilter(includes: ["model-0000[!1]-*"])) == ["model-00002-of-00002.safetensors"])
        #expect(Self.kept(ObjectKeyFilter(includes: ["[Rt]*"])) == ["tokenizer.json", "README.md"])
        #expect(Self.kept(ObjectKeyFilter(includes: ["\\[draft].md"])) == ["[draft].md"])
        #expect(Self.kept(ObjectKeyFilter(includes: ["[[]draft].md"])) == ["[draft].md"])
        #expect(ObjectKeyFilter(includes: ["?"]).keeps("é"), "one character, not one byte")
        #expect(ObjectKeyFilter(includes: ["[]]"]).keeps("]"), "a ']' first in a class belongs to it")
    }

    @Test("A pattern of many stars against a long key takes the time of its length, not of its combinations")
    func noExponentialBacktracking() {
        let pattern = String(repeating: "*a", count: 30) + "*b"
        let key = String(repeating: "a", count: 1024)
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            #expect(!ObjectKeyFilter(includes: [pattern]).keeps(key))
        }
        #expect(elapsed < .seconds(5))
    }

    @Test("An empty pattern, or a '[' without its ']', is a usage error")
    func malformedPatterns() {
        for filter in [ObjectKeyFilter(includes: [""]), ObjectKeyFilter(excludes: ["data/[0-9"])] {
            #expect(throws: BraidError.self) { try filter.validate() }
        }
        #expect(throws: Never.self) { try ObjectKeyFilter(includes: ["a\\[b", "[!]]"]).validate() }
    }
}
