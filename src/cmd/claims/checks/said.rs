//! What a lock's own file says of it, as the ledger's rows read it: from the lock's registry
//! entry, never restated by a row.

/// What a lock's own file says of it, read from its registry entry (never restated by a
/// row): its description (`LockInfo`: FCFS, bounded registers, safe, its RMR bound per model,
/// its mutants) and the progress properties its code claims (`Lock::claims`). A row that
/// states one of these takes it from here, so changing or renaming the lock's file changes
/// the row rather than leaving a second copy behind.
#[derive(Clone, Debug)]
pub struct Said {
    /// The lock's description.
    pub info: crate::locks::LockInfo,
    /// The progress properties it claims.
    pub claims: crate::locks::Claims,
    /// What its paper says sections of a passage cost in RMRs (CC), section by section.
    pub sections: &'static [crate::locks::SectionCost],
}

impl Said {
    /// The entry of `lock` in the registry. Panics when there is none: the ledger names a
    /// lock the registry lost (renamed or removed), which the ledger's tests catch.
    pub fn of(lock: &str) -> Said {
        let entry = crate::registry::find(lock).unwrap_or_else(|| {
            panic!("the ledger names lock {lock:?}, which the registry does not have")
        });
        let build = entry.scheduled.clone().unwrap_or(entry.native.clone());
        let lock = build(&crate::locks::Params::new(
            3,
            2,
            crate::mem::WaitPolicy::Spin,
        ));
        Said {
            info: entry.info,
            claims: lock.claims(),
            sections: lock.section_costs(),
        }
    }

    /// The formula of the RMR bound the file claims under `model` (`"none"` when none).
    pub fn bound(&self, model: crate::mem::Model) -> String {
        (self.info.bound)(model, 2).map_or_else(|| "none".into(), |b| b.formula)
    }

    /// The growth class `growth::judge` expects of the bound under `model` and its O(·) in
    /// the paper column: linear for c·N + d, constant for a constant.
    pub fn order(&self, model: crate::mem::Model) -> (&'static str, &'static str) {
        match (self.info.bound)(model, 2) {
            Some(b) if b.c.is_some() => ("O(N)", "linear"),
            Some(b) if b.direction == crate::locks::Direction::Upper => ("O(1)", "constant"),
            _ => ("no bound", "none"),
        }
    }

    /// The cost its file states for `section` (`doorway`, `waiting`, `exit`). Panics when it
    /// states none: the ledger names a section the lock's file no longer bounds.
    pub fn section(&self, section: &str) -> crate::locks::SectionCost {
        let lock = self.info.name;
        *self
            .sections
            .iter()
            .find(|c| c.section == section)
            .unwrap_or_else(|| {
                panic!("the ledger names the {section} cost of {lock}, which {lock}'s file does not state")
            })
    }

    /// `name`, when the lock's file seeds a mutant of that name. Panics otherwise, as
    /// [`Said::of`] does.
    pub fn mutant(&self, name: &str) -> String {
        let lock = self.info.name;
        (self.info.mutants)()
            .into_iter()
            .find(|m| m.name == name)
            .map(|m| m.name.to_string())
            .unwrap_or_else(|| {
                panic!("the ledger names mutant {lock}/{name}, which {lock}'s file does not seed")
            })
    }
}

/// The paper column of a property row: what the lock's file claims of it.
pub fn holds(claimed: bool) -> &'static str {
    if claimed {
        "holds (proved)"
    } else {
        "not satisfied"
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::{ledger::Spec, seed000, seed001, seed002};
    use super::super::Level;
    use super::*;
    use crate::locks::{Bound, Claims, LockInfo};
    use crate::mem::{Model, WaitPolicy};

    /// What the registry's entry of `lock` says, read here without `Said`.
    fn entry(lock: &str) -> (LockInfo, Claims) {
        let e = crate::registry::find(lock).expect(lock);
        let lock = (e.native)(&crate::locks::Params::new(3, 2, WaitPolicy::Spin));
        (e.info, lock.claims())
    }

    fn paper<'a>(specs: &'a [Spec], id: &str) -> &'a str {
        let s = specs.iter().find(|s| s.id == id);
        &s.unwrap_or_else(|| panic!("no row {id}")).paper
    }

    /// Every row that states what a lock's file says (FCFS, bounded registers, safe, its
    /// claimed progress properties, its RMR bound per model, its mutants) agrees with the
    /// lock's registry entry.
    #[test]
    fn rows_state_what_the_registry_says() {
        let l = Level {
            quick: true,
            mutant: None,
        };
        let mut specs = seed000::specs(&l);
        specs.extend(seed001::specs(&l));
        specs.extend(seed002::specs(&l));
        let expect = |id: &str, claimed: bool| {
            assert_eq!(paper(&specs, id), holds(claimed), "{id}");
        };
        for (lock, id) in [("glb", "glb"), ("bwb-gme", "bwbgme")] {
            let (info, claims) = entry(lock);
            expect(&format!("000/{id}-p1"), info.safe);
            expect(&format!("000/{id}-p3"), claims.bounded_exit);
            expect(&format!("000/{id}-p4"), claims.concurrent_entry);
            expect(&format!("000/{id}-p5"), info.fcfs);
            expect(&format!("000/{id}-p7"), claims.fife);
            expect(&format!("000/{id}-p8"), claims.strong_concurrent_entry);
            let bound = (info.bound)(Model::Cc, 4).unwrap().formula;
            assert!(paper(&specs, &format!("000/{id}-rmr")).ends_with(&bound));
        }
        // The sections' costs, as the lock's file states them (`Lock::section_costs`).
        for (id, lock, section) in [
            ("000/glb-exit", "glb", "exit"),
            ("000/glb-doorway", "glb", "doorway"),
            ("000/bwbgme-doorway", "bwb-gme", "doorway"),
            ("000/bwbgme-waiting", "bwb-gme", "waiting"),
            ("000/bwbgme-exit", "bwb-gme", "exit"),
        ] {
            let c = Said::of(lock).section(section);
            assert!(paper(&specs, id).ends_with(c.formula), "{id}");
            let row = specs.iter().find(|s| s.id == id).unwrap();
            assert!(row.claim.contains(&format!("lines {}", c.lines)), "{id}");
        }
        let bound = (entry("bw-bakery").0.bound)(Model::Cc, 4).unwrap();
        assert!(paper(&specs, "000/bw-bakery-rmr").ends_with(&bound.formula));
        let blocks = (entry("burns-lamport").0.bound)(Model::Cc, 4).unwrap();
        assert_eq!(
            paper(&specs, "000/sec4"),
            format!("{} blocks", blocks.formula)
        );
        assert_eq!(
            paper(&specs, "000/sec6") == "a violating schedule exists",
            !entry("naive-bwb-gme").0.safe
        );
        assert_eq!(
            paper(&specs, "000/thm8") == "unbounded",
            !entry("bwb-gme").0.bounded
        );
        let (info, claims) = entry("zehavi-kex");
        expect("001/thm1-kex", info.safe);
        expect("001/thm1-fife", claims.fife);
        expect("001/lemma2-exit", claims.bounded_exit);
        expect("001/thm1-sf", claims.crash_tolerant);
        for (id, model) in [("001/lemma7-cc", Model::Cc), ("001/lemma7-dsm", Model::Dsm)] {
            let bound = (info.bound)(model, 4).unwrap().formula.replace('N', "n");
            assert!(paper(&specs, id).ends_with(&bound), "{id}");
        }
        let (info, _) = entry("b-bakery");
        expect("002/thm4-me", info.safe);
        expect("002/thm4-fifo", info.fcfs);
        expect("002/thm4-bounded", info.bounded);
        let modulus = specs.iter().find(|s| s.id == "002/sec5-modulus").unwrap();
        let mutants: Vec<&str> = (info.mutants)().iter().map(|m| m.name).collect();
        let named: Vec<&String> = modulus
            .checks
            .iter()
            .filter_map(|c| c.iter().position(|a| a == "--mutant").map(|i| &c[i + 1]))
            .collect();
        assert!(!named.is_empty());
        assert!(
            named.iter().all(|m| mutants.contains(&m.as_str())),
            "{named:?}"
        );
        let lamport = entry("lamport-bakery").0.bounded;
        assert_eq!(
            paper(&specs, "002/sec3.1").starts_with("Lamport: unbounded"),
            !lamport
        );
    }

    /// A row is built from the entry, not a copy: a lock whose file claimed otherwise gets
    /// another row.
    #[test]
    fn a_changed_lock_file_changes_its_rows() {
        fn other(_: Model, _: usize) -> Option<Bound> {
            Some(Bound::constant(7, "a changed file"))
        }
        let mut said = Said::of("glb");
        let before = seed000::rmr_row("000/x", "§", "GLB", "", &said, Vec::new());
        assert!(before.paper.ends_with("11N − 4"), "{}", before.paper);
        said.info.bound = other;
        let after = seed000::rmr_row("000/x", "§", "GLB", "", &said, Vec::new());
        assert_eq!(after.paper, "O(1); counted from the figure ≤ 7");
        assert_eq!(after.claim, "GLB: O(1) RMRs per passage in CC");
        assert_eq!(seed000::claim("GLB", "P5 FCFS", true), "GLB: P5 FCFS");
        assert_eq!(
            seed000::claim("GLB", "P5 FCFS", false),
            "GLB does not satisfy P5 FCFS"
        );
    }

    #[test]
    #[should_panic(expected = "which b-bakery's file does not seed")]
    fn a_mutant_the_lock_file_lost_is_named() {
        Said::of("b-bakery").mutant("no-such-mutant");
    }

    #[test]
    #[should_panic(expected = "which the registry does not have")]
    fn a_lock_the_registry_lost_is_named() {
        Said::of("no-such-lock");
    }
}
