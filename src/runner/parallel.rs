//! Independent work spread over threads, its results kept in the items' order: what the
//! simulator's points and seeds and `rmr`'s cells share.

/// Runs `f` on every item, on up to `jobs` threads (0: one per CPU), and returns the results
/// in the items' order. For independent, deterministic work (simulations, `rmr`'s runs) what it
/// gives does not depend on `jobs`; only how long it takes does.
pub(crate) fn in_parallel<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let mut out = Vec::with_capacity(items.len());
    let kept: Result<(), std::convert::Infallible> = in_order(items, jobs, f, |_, r| {
        out.push(r);
        Ok(())
    });
    let Ok(()) = kept;
    out
}

/// [`in_parallel`], handing each result to `sink` (with its item's index) in the items' order
/// as soon as it and every one before it are done, so that a long run reports as it goes. An
/// error from `sink` stops the work: no item is started after it, and it is returned once the
/// items under way finish.
pub(crate) fn in_order<T: Sync, R: Send, E>(
    items: &[T],
    jobs: usize,
    f: impl Fn(&T) -> R + Sync,
    mut sink: impl FnMut(usize, R) -> Result<(), E>,
) -> Result<(), E> {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let cpus = std::thread::available_parallelism().map_or(1, |c| c.get());
    let jobs = if jobs == 0 { cpus } else { jobs }.min(items.len());
    if jobs <= 1 {
        return items
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| sink(i, f(x)));
    }
    let next = AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, R)>();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let tx = tx.clone();
            let (next, f) = (&next, &f);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Relaxed);
                let Some(item) = items.get(i) else {
                    return;
                };
                if tx.send((i, f(item))).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        // Results that came early, by index, until those before them come.
        let mut early: std::collections::VecDeque<Option<R>> = Default::default();
        let mut due = 0;
        for (i, r) in rx {
            let k = i - due;
            if early.len() <= k {
                early.resize_with(k + 1, || None);
            }
            early[k] = Some(r);
            while let Some(r) = early.front_mut().and_then(Option::take) {
                early.pop_front();
                if let Err(e) = sink(due, r) {
                    next.store(items.len(), Relaxed);
                    return Err(e);
                }
                due += 1;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn in_parallel_keeps_the_order_whatever_the_jobs() {
        let items: Vec<u64> = (0..37).collect();
        let slow_square = |&x: &u64| {
            // Uneven work, so that threads finish out of order.
            std::thread::sleep(std::time::Duration::from_micros((x * 7919) % 300));
            x * x
        };
        let want: Vec<u64> = items.iter().map(|x| x * x).collect();
        for jobs in [0, 1, 2, 5, 100] {
            assert_eq!(
                super::in_parallel(&items, jobs, slow_square),
                want,
                "jobs {jobs}"
            );
        }
        assert!(super::in_parallel(&[] as &[u64], 0, slow_square).is_empty());
    }

    #[test]
    fn in_order_hands_results_over_in_order_and_stops_at_an_error() {
        let items: Vec<u64> = (0..40).collect();
        let uneven = |&x: &u64| {
            std::thread::sleep(std::time::Duration::from_micros((x * 7919) % 300));
            x + 1
        };
        for jobs in [1, 2, 5] {
            let mut seen = Vec::new();
            let r = super::in_order(&items, jobs, uneven, |i, y| {
                seen.push((i, y));
                if i == 25 {
                    Err(i)
                } else {
                    Ok(())
                }
            });
            assert_eq!(r, Err(25), "jobs {jobs}");
            let want: Vec<(usize, u64)> = (0..26).map(|i| (i, i as u64 + 1)).collect();
            assert_eq!(seen, want, "jobs {jobs}");
        }
    }
}
