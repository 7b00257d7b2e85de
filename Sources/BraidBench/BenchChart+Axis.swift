import Braid

#if canImport(Glibc)
    import Glibc
#endif

extension BenchChart {
    /// Tick values for a linear axis from zero: round steps (1, 2, 2.5 or 5 times a power of ten) reaching at
    /// least the largest value.
    public enum Axis {
        /// Ticks from 0 to the first round value at or above `maximum`, about `target` steps apart.
        public static func ticks(upTo maximum: Double, target: Int = 5) -> [Double] {
            guard maximum > 0, maximum.isFinite else { return [0, 1] }
            let rough = maximum / Double(max(1, target))
            let magnitude = pow(10, log10(rough).rounded(.down))
            let residual = rough / magnitude
            let multiple: Double =
                residual <= 1 ? 1 : residual <= 2 ? 2 : residual <= 2.5 ? 2.5 : residual <= 5 ? 5 : 10
            let step = multiple * magnitude
            // A subnormal maximum has no representable step; a target past a million ticks is not drawable.
            guard step > 0, step.isFinite else { return [0, maximum] }
            let steps = Int(min(1e6, (maximum / step - 1e-9).rounded(.up)))
            return (0...max(1, steps)).map { Double($0) * step }
        }

        /// A label with as few decimals as the value needs (at most six): `400`, `2.5`, `0.05`.
        public static func label(_ value: Double) -> String {
            for digits in 0..<6 {
                let text = Formatting.fixed(value, digits: digits)
                if let parsed = Double(text), abs(parsed - value) <= 1e-9 * max(1, abs(value)) { return text }
            }
            return Formatting.fixed(value, digits: 6)
        }
    }
}
