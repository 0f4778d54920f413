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
    /// Certified hits at normal scales entering at some t > 0.
    pub entering: usize,
    /// Of those, the ones whose `t_below` is within 1 % of their `t_enter`.
    pub tight: usize,
}

impl LaneTally {
    /// Checks a filter call's verdicts against `want` (the scalar function's hit and
    /// `t_enter` per lane): never both verdicts, every certified one the hit, and a certified
    /// hit's `t_below` at or below its `t_enter`. `normal`: whether these pairs count toward
    /// the decided share; `what(lane)` names a pair on failure.
    #[track_caller]
    pub fn check(
        &mut self,
        verdicts: &LaneVerdicts,
        want: &[(bool, f32)],
        normal: bool,
        what: impl Fn(usize) -> String,
    ) {
        for (lane, &(want, t_enter)) in want.iter().enumerate() {
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
            if !verdicts.hit[lane] {
                continue;
            }
            let t_below = verdicts.t_below[lane];
            assert!(
                t_below <= t_enter,
                "{}: t_below {t_below:e} above t_enter {t_enter:e}",
                what(lane)
            );
            if normal && t_enter > 0.0 {
                self.entering += 1;
                self.tight += (t_below >= t_enter * 0.99) as usize;
            }
        }
    }

    /// The filter did its job: most normal-scale pairs decided, many hits certified, and
    /// nearly every certified hit entering at t > 0 given a close `t_below`.
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
        assert!(
            self.entering > 1_000 && self.tight * 10 > self.entering * 9,
            "{} of {} entering hits with a t_below within 1 %",
            self.tight,
            self.entering
        );
    }
}
