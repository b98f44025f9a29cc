//! The five source papers ("seeds"), cited by authors, title and venue: the one table `list`,
//! reports and the README's citation lines take them from. A lock's `source` names its seed
//! (`seed 000 Fig. 1`); [`cite_source`] expands that to the citation.
//!
//! Taken from the papers' first pages (the plain-text extractions in the project's seed
//! folder). The extraction of seed 001 carries no title line or venue; its citation is the
//! published paper's.

use serde::Serialize;

/// One source paper.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct Citation {
    /// Seed number: `000` … `004`.
    pub seed: &'static str,
    /// Authors, as on the first page.
    pub authors: &'static str,
    /// Title.
    pub title: &'static str,
    /// Where and when it appeared.
    pub venue: &'static str,
}

impl Citation {
    /// `Authors, "Title", Venue.`
    pub fn line(&self) -> String {
        format!("{}, \"{}\", {}.", self.authors, self.title, self.venue)
    }
}

/// The five seeds, in order.
pub const CITATIONS: [Citation; 5] = [
    Citation {
        seed: "000",
        authors: "Y. He, K. Gopalakrishnan, E. Gafni",
        title: "Group mutual exclusion in linear time and space",
        venue: "Theoretical Computer Science (Elsevier), 2017",
    },
    Citation {
        seed: "001",
        authors: "M. Zehavi",
        title: "An Improved k-Exclusion Algorithm",
        venue: "Journal of Computers 9(3):529–536, 2014",
    },
    Citation {
        seed: "002",
        authors: "P. Jayanti, K. Tan, G. Friedland, A. Katz",
        title: "Bounding Lamport's Bakery Algorithm",
        venue: "SOFSEM 2001 (LNCS 2234, Springer)",
    },
    Citation {
        seed: "003",
        authors: "N. Mittal, P. K. Mohan",
        title: "A priority-based distributed group mutual exclusion algorithm when group \
                access is non-uniform",
        venue: "Journal of Parallel and Distributed Computing (Elsevier), 2007",
    },
    Citation {
        seed: "004",
        authors: "S. Kamei, H. Kakugawa",
        title: "An asynchronous message-passing distributed algorithm for the generalized \
                local critical section problem",
        venue: "Algorithms 10(2):38 (MDPI), 2017",
    },
];

/// The citation of seed `seed` (`"000"` … `"004"`).
pub fn citation(seed: &str) -> Option<&'static Citation> {
    CITATIONS.iter().find(|c| c.seed == seed)
}

/// The seed a lock's `source` names (`seed 002 Fig. 2` → `002`), if any.
pub fn seed_of(source: &str) -> Option<&'static str> {
    let rest = source.split("seed ").nth(1)?;
    let number: String = rest.chars().take_while(char::is_ascii_digit).collect();
    citation(&number).map(|c| c.seed)
}

/// The citation a lock's `source` rests on: `None` for baselines and sources naming no seed.
pub fn cite_source(source: &str) -> Option<&'static Citation> {
    seed_of(source).and_then(citation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_seed_has_authors_title_and_venue() {
        for (i, c) in CITATIONS.iter().enumerate() {
            assert_eq!(c.seed, format!("{i:03}"));
            assert!(!c.authors.is_empty() && !c.title.is_empty() && !c.venue.is_empty());
            assert!(c.line().contains(c.title));
        }
    }

    #[test]
    fn a_source_names_its_seed() {
        assert_eq!(seed_of("seed 002 Fig. 2 (UB-Bakery)"), Some("002"));
        assert_eq!(
            cite_source("seed 000 Figs. 4–6").unwrap().title,
            "Group mutual exclusion in linear time and space"
        );
        assert_eq!(seed_of("baseline"), None);
        assert_eq!(seed_of("seed 009"), None);
    }

    #[test]
    fn the_claims_page_cites_what_this_table_says() {
        // The papers are listed in docs/claims.md (the README links there).
        let readme = include_str!("../../docs/claims.md");
        let flat = readme.split_whitespace().collect::<Vec<_>>().join(" ");
        for c in CITATIONS {
            assert!(
                flat.contains(c.authors),
                "docs/claims.md lacks {}",
                c.authors
            );
            assert!(flat.contains(c.title), "docs/claims.md lacks {}", c.title);
            let venue = c.venue.split(" (").next().unwrap();
            assert!(flat.contains(venue), "docs/claims.md lacks {venue}");
        }
    }
}
