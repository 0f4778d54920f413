//! The lane filters' verdicts against the scalar functions' hits.

use rectcast::cpu::lanes::LaneVerdicts;

/// What a run of lane verdicts decided, checked as it goes.
#[derive(Debug, Default)]
pub struct LaneTally {
    /// Pairs at normal scales (where the filter must decide most).
    pub total: usize,
    /// Of those, the decided ones.
    pub decided: usize,
    /// Certified hits, at every scale.
    pub hits_decided: usize,
}

impl LaneTally {
    /// Checks a filter call's verdicts against `want` (the scalar function's hit per lane): never both
    /// verdicts, and every certified one the hit. `normal`: whether these pairs count toward
    /// the decided share; `what(lane)` names a pair on failure.
    #[track_caller]
    pub fn check(
        &mut self,
        verdicts: &LaneVerdicts,
        want: &[bool],
        normal: bool,
        what: impl Fn(usize) -> String,
    ) {
        for (lane, &want) in want.iter().enumerate() {
            self.total += normal as usize;
            assert!(
                !(verdicts.hit[lane] && verdicts.unsure[lane]),
                "{}: both verdicts",
                what(lane)
            );
            if verdicts.unsure[lane] {
                continue;
            }
            self.decided += normal as usize;
            self.hits_decided += verdicts.hit[lane] as usize;
            assert_eq!(verdicts.hit[lane], want, "{}", what(lane));
        }
    }

    /// The filter did its job: most normal-scale pairs decided, many hits certified.
    #[track_caller]
    pub fn assert_enough(&self) {
        assert!(
            self.decided * 10 > self.total * 8,
            "{} of {} decided at normal scales",
            self.decided,
            self.total
        );
        assert!(
            self.hits_decided > 10_000,
            "{} hits decided",
            self.hits_decided
        );
    }
}
