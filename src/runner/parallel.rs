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
    let cpus = std::thread::available_parallelism().map_or(1, |c| c.get());
    let jobs = if jobs == 0 { cpus } else { jobs }.min(items.len());
    if jobs <= 1 {
        return items.iter().map(f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else {
                            return mine;
                        };
                        mine.push((i, f(item)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_unstable_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, r)| r).collect()
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
}
