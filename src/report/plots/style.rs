//! How a lock looks in every plot: one colour and one marker, derived from its name (not from
//! its position in a report), so a lock keeps its look across every report and every plot.
//!
//! A name hashes (FNV-1a, stable across builds and platforms) to a colour and a marker. The
//! names of the registry are placed in listing order: each takes its hash colour or, when that
//! colour is used more than another, the next least-used colour after it, and its hash marker or
//! the next one no earlier lock of that colour has. So the registry's locks never share a look,
//! the first twelve share no colour, and colours repeat evenly after that, told apart by their
//! markers. A lock added at the end of the registry changes no other lock's look. A name
//! outside the registry (a result saved by an older build) takes its hash colour and marker.

use std::sync::OnceLock;

use plotters::style::RGBColor;

/// Okabe–Ito (without its yellow, too pale on white) and five of Tol's colours.
pub const PALETTE: [RGBColor; 12] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x00, 0x00, 0x00),
    RGBColor(0x88, 0x22, 0x55),
    RGBColor(0x99, 0x99, 0x33),
    RGBColor(0x33, 0x22, 0x88),
    RGBColor(0x44, 0xAA, 0x99),
    RGBColor(0xAA, 0x44, 0x99),
];

/// Marker shapes: circle, triangle up, square, diamond, triangle down, hexagon.
pub const MARKERS: usize = 6;

/// Distinct looks (colour × marker).
pub const SLOTS: usize = PALETTE.len() * MARKERS;

/// The look of one lock: an index into [`PALETTE`] and a marker shape (`0..MARKERS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Look {
    /// Index into [`PALETTE`].
    pub colour: usize,
    /// Marker shape.
    pub marker: usize,
}

impl Look {
    /// The colour.
    pub fn rgb(self) -> RGBColor {
        PALETTE[self.colour]
    }

    /// The colour as `#rrggbb`.
    pub fn hex(self) -> String {
        let RGBColor(r, g, b) = self.rgb();
        format!("#{r:02X}{g:02X}{b:02X}")
    }

    fn of_slot(slot: usize) -> Look {
        Look {
            colour: slot % PALETTE.len(),
            marker: (slot / PALETTE.len()) % MARKERS,
        }
    }
}

/// FNV-1a of `name`: stable across builds, platforms and runs.
fn hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The slot of each of `names`, in order (see the module's note).
fn place(names: &[&str]) -> Vec<(String, usize)> {
    const C: usize = PALETTE.len();
    let mut taken = [false; SLOTS];
    let mut used = [0usize; C];
    let mut out: Vec<(String, usize)> = Vec::new();
    for name in names {
        if out.iter().any(|(n, _)| n == name) {
            continue;
        }
        let h = hash(name);
        let least = used.iter().copied().min().unwrap_or(0);
        let start = (h % C as u64) as usize;
        let colour = (0..C)
            .map(|d| (start + d) % C)
            .find(|&c| used[c] == least)
            .unwrap_or(start);
        let first = ((h / C as u64) % MARKERS as u64) as usize;
        let Some(marker) = (0..MARKERS)
            .map(|d| (first + d) % MARKERS)
            .find(|&m| !taken[m * C + colour])
        else {
            // Every marker of this colour taken (more than SLOTS names): share a look.
            out.push((name.to_string(), first * C + colour));
            continue;
        };
        let slot = marker * C + colour;
        taken[slot] = true;
        used[colour] += 1;
        out.push((name.to_string(), slot));
    }
    out
}

/// The slot of a name outside the registry: its hash colour and marker.
fn hash_slot(name: &str) -> usize {
    let h = hash(name);
    let c = PALETTE.len() as u64;
    (((h / c) % MARKERS as u64) * c + h % c) as usize
}

/// The slots of the registry's locks.
fn registry_slots() -> &'static [(String, usize)] {
    static SLOTS_OF: OnceLock<Vec<(String, usize)>> = OnceLock::new();
    SLOTS_OF.get_or_init(|| {
        let names: Vec<&str> = crate::registry::registry()
            .iter()
            .map(|e| e.info.name)
            .collect();
        place(&names)
    })
}

/// The look of the lock `name`, the same in every plot of every report.
pub fn look(name: &str) -> Look {
    let slot = registry_slots()
        .iter()
        .find(|(n, _)| n == name)
        .map_or_else(|| hash_slot(name), |(_, s)| *s);
    Look::of_slot(slot)
}

/// The outline of marker `shape` centred on `(x, y)`, `r` its radius in px: a polygon's
/// vertices, or `None` for the circle.
pub fn marker_outline(shape: usize, (x, y): (f64, f64), r: f64) -> Option<Vec<(f64, f64)>> {
    let regular = |sides: usize, turn: f64, radius: f64| -> Vec<(f64, f64)> {
        (0..sides)
            .map(|i| {
                let a = turn + std::f64::consts::TAU * i as f64 / sides as f64;
                (x + radius * a.cos(), y + radius * a.sin())
            })
            .collect()
    };
    let up = -std::f64::consts::FRAC_PI_2;
    match shape % MARKERS {
        0 => None,
        1 => Some(regular(3, up, r * 1.4)),
        2 => Some(vec![
            (x - r, y - r),
            (x + r, y - r),
            (x + r, y + r),
            (x - r, y + r),
        ]),
        3 => Some(regular(4, up, r * 1.4)),
        4 => Some(regular(3, -up, r * 1.4)),
        _ => Some(regular(6, 0.0, r * 1.2)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_look_depends_on_the_name_only() {
        assert_eq!(look("glb"), look("glb"));
        // The hash is fixed: a lock's look does not change between builds.
        assert_eq!(hash(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(hash("a"), 0xaf63_dc4c_8601_ec8c);
        let outside = look("a-lock-no-registry-has");
        assert_eq!(outside, look("a-lock-no-registry-has"));
    }

    #[test]
    fn the_registry_s_locks_never_share_a_look_and_spread_their_colours() {
        let names: Vec<&str> = crate::registry::registry()
            .iter()
            .map(|e| e.info.name)
            .collect();
        assert!(names.len() > 20);
        let looks: Vec<Look> = names.iter().map(|n| look(n)).collect();
        let mut distinct = looks.clone();
        distinct.sort_by_key(|l| (l.colour, l.marker));
        distinct.dedup();
        assert_eq!(distinct.len(), names.len());
        // The first twelve share no colour; no colour serves more than its even share.
        let mut first: Vec<usize> = looks[..PALETTE.len()].iter().map(|l| l.colour).collect();
        first.sort_unstable();
        first.dedup();
        assert_eq!(first.len(), PALETTE.len());
        let most = (0..PALETTE.len())
            .map(|c| looks.iter().filter(|l| l.colour == c).count())
            .max()
            .unwrap();
        assert_eq!(most, names.len().div_ceil(PALETTE.len()));
    }

    #[test]
    fn a_name_added_last_changes_no_other_look() {
        let before = place(&["a", "b", "c"]);
        let after = place(&["a", "b", "c", "d"]);
        assert_eq!(before[..], after[..3]);
        assert_eq!(place(&["x", "x", "y"]).len(), 2);
        // Outside the registry: the hash's colour and marker.
        let h = hash("zz");
        let l = look("zz");
        assert_eq!(l.colour, (h % PALETTE.len() as u64) as usize);
    }

    #[test]
    fn markers_have_distinct_outlines() {
        assert!(marker_outline(0, (0.0, 0.0), 4.0).is_none());
        let sides: Vec<usize> = (1..MARKERS)
            .map(|s| marker_outline(s, (0.0, 0.0), 4.0).unwrap().len())
            .collect();
        assert_eq!(sides, vec![3, 4, 4, 3, 6]);
        // Triangle up has its apex above the centre, triangle down below.
        let up = marker_outline(1, (0.0, 0.0), 4.0).unwrap();
        let down = marker_outline(4, (0.0, 0.0), 4.0).unwrap();
        assert!(up[0].1 < 0.0 && down[0].1 > 0.0);
    }
}
