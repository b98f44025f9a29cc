//! The pthread interposer under a C program of our own (tests/c/locks.c): static initialisers,
//! condition variables, recursive and error-checking mutexes, rwlocks (GME sessions), trylock
//! and timed locks, many short-lived threads (ids recycled), id exhaustion, and a broken lock
//! caught by the oracle. Every run's output is checked, and the statistics beside it.

#[path = "interposer/mod.rs"]
mod interposer;

use interposer::{locks_program, run_under};

/// Mutual-exclusion locks of each family, a GME lock, and pthread itself.
const LOCKS: [&str; 6] = ["pthread", "ticket", "mcs", "b-bakery", "glb", "bwb-gme"];

#[test]
fn a_static_mutex_keeps_its_counter_on_every_lock() {
    let Some(prog) = locks_program() else { return };
    for lock in LOCKS {
        let r = run_under(lock, &prog, &["mutex", "4", "3000"], &[]);
        r.assert_ok(lock);
        assert_eq!(r.stdout().trim(), "ok mutex 12000", "{lock}");
        assert_eq!(
            r.sum("acquisitions"),
            12000,
            "{lock}: every lock call counted"
        );
        assert_eq!(
            r.sum("mutexes"),
            1,
            "{lock}: one static mutex, seen at first use"
        );
    }
}

#[test]
fn condition_variables_work_on_interposed_mutexes() {
    let Some(prog) = locks_program() else { return };
    for lock in LOCKS {
        let r = run_under(lock, &prog, &["cond", "3", "3000"], &[]);
        r.assert_ok(lock);
        assert_eq!(r.stdout().trim(), "ok cond 4501500", "{lock}");
        assert!(r.sum("cond_waits") > 0, "{lock}: the program waited");
    }
}

#[test]
fn recursive_and_error_checking_mutexes_pass_through() {
    let Some(prog) = locks_program() else { return };
    for lock in ["ticket", "b-bakery", "glb"] {
        let r = run_under(lock, &prog, &["recursive", "4", "2000"], &[]);
        r.assert_ok(lock);
        // The static recursive one, the initialised one, the error-checking one.
        assert_eq!(r.sum("passthrough_mutexes"), 3, "{lock}");
        assert!(r.sum("passthrough_ops") > 0, "{lock}");
        assert_eq!(
            r.sum("mutexes"),
            1,
            "{lock}: the normal mutex inside is interposed"
        );
    }
}

#[test]
fn rwlocks_share_reads_on_gme_locks_and_exclude_on_mutexes() {
    let Some(prog) = locks_program() else { return };
    for lock in [
        "pthread",
        "glb",
        "bwb-gme",
        "parking-lot-rwlock",
        "ticket",
        "mcs",
    ] {
        let r = run_under(lock, &prog, &["rwlock", "4", "2000"], &[]);
        r.assert_ok(lock);
        assert_eq!(r.sum("rwlocks"), 1, "{lock}");
        let shared = r.sum("shared_acquisitions");
        let gme = matches!(lock, "pthread" | "glb" | "bwb-gme" | "parking-lot-rwlock");
        assert_eq!(
            shared > 0,
            gme,
            "{lock}: read locks shared only on GME locks"
        );
    }
}

#[test]
fn short_lived_threads_recycle_ids() {
    let Some(prog) = locks_program() else { return };
    // 4 threads at a time, 60 rounds: 240 threads through 5 ids.
    for lock in ["ticket", "b-bakery"] {
        let r = run_under(
            lock,
            &prog,
            &["churn", "4", "60"],
            &[("LOCKBENCH_PROCS", "5")],
        );
        r.assert_ok(lock);
        assert_eq!(r.stdout().trim(), "ok churn 240 threads");
        let peak = r.stats[0]["ids_peak"].as_u64().unwrap();
        assert!((1..=5).contains(&peak), "{lock}: peak {peak}");
    }
}

#[test]
fn running_out_of_ids_is_one_line_and_exit_87() {
    let Some(prog) = locks_program() else { return };
    // 6 threads each hold a mutex until all 6 do: 4 ids cannot serve them.
    let r = run_under("ticket", &prog, &["hold", "6"], &[("LOCKBENCH_PROCS", "4")]);
    assert_eq!(r.output.status.code(), Some(87), "stderr {:?}", r.stderr());
    let err = r.stderr();
    assert_eq!(err.lines().count(), 1, "{err:?}");
    assert!(
        err.contains("LOCKBENCH_PROCS=4") && err.contains("larger"),
        "{err}"
    );
    // With enough ids the same program finishes.
    let r = run_under("ticket", &prog, &["hold", "6"], &[("LOCKBENCH_PROCS", "6")]);
    r.assert_ok("6 ids");
}

#[test]
fn trylock_fails_on_a_held_lock_and_timedlock_times_out() {
    let Some(prog) = locks_program() else { return };
    for lock in ["pthread", "ticket", "mcs", "bw-bakery", "glb"] {
        let r = run_under(lock, &prog, &["trylock"], &[]);
        r.assert_ok(lock);
        assert!(
            r.sum("trylock_failures") >= 1,
            "{lock}: the EBUSY was counted"
        );
        run_under(lock, &prog, &["timed"], &[]).assert_ok(lock);
    }
}

#[test]
fn a_broken_lock_is_caught_by_the_oracle() {
    let Some(prog) = locks_program() else { return };
    // `overlap` keeps each holder inside until another thread has called lock, so threads meet
    // at the lock on every passage however they are scheduled: a correct lock is contended and
    // never violated; noop lets the caller in, the real mutex inside keeps the counter right,
    // and the oracle sees two threads inside together.
    let ticket = run_under("ticket", &prog, &["overlap", "4", "300"], &[]);
    ticket.assert_ok("ticket");
    assert_eq!(ticket.stdout().trim(), "ok overlap 1200");
    assert_eq!(ticket.sum("violations"), 0, "{:?}", ticket.stats);
    assert!(ticket.sum("contended") > 0, "{:?}", ticket.stats);
    let r = run_under("noop", &prog, &["overlap", "4", "300"], &[]);
    assert!(r.output.status.success(), "{}", r.stderr());
    assert_eq!(r.stdout().trim(), "ok overlap 1200");
    assert!(r.sum("violations") > 0, "{:?}", r.stats);
}

#[test]
fn bad_settings_are_one_line_and_exit_2() {
    let Some(prog) = locks_program() else { return };
    for (lock, env, says) in [
        ("no-such-lock", ("LOCKBENCH_PROCS", "4"), "lockbench list"),
        ("semaphore", ("LOCKBENCH_PROCS", "4"), "k-exclusion"),
        ("ticket", ("LOCKBENCH_PROCS", "0"), "LOCKBENCH_PROCS"),
        ("ticket", ("LOCKBENCH_SAMPLE", "3"), "power of two"),
    ] {
        let r = run_under(lock, &prog, &["mutex", "1", "10"], &[env]);
        assert_eq!(r.output.status.code(), Some(2), "{lock} {env:?}");
        let err = r.stderr();
        assert_eq!(err.lines().count(), 1, "{err:?}");
        assert!(err.contains(says), "{err}");
    }
}
