//! `mp-run --runtime mpi` through `mpirun` on this one host (loopback), with `--features mpi`:
//! every algorithm safe on 4 ranks (and live, but LKCS as transcribed), message counts equal to the simulator's where they
//! do not depend on the interleaving, several processes per rank, bad input. Without the
//! feature: `--runtime mpi` is bad input naming the rebuild.

mod common;
use common::lockbench;

#[cfg(not(feature = "mpi"))]
#[test]
fn runtime_mpi_without_the_feature_names_the_rebuild() {
    let out = lockbench()
        .args(["mp-run", "--runtime", "mpi", "--algo", "ra1", "--n", "4"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--features mpi"), "{err}");
    // --procs-per-rank belongs to the MPI runtime.
    let out = lockbench()
        .args([
            "mp-run",
            "--algo",
            "ra1",
            "--n",
            "4",
            "--procs-per-rank",
            "2",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[cfg(feature = "mpi")]
mod with_mpi {
    use std::process::Output;

    use super::lockbench;
    use serde_json::Value;

    /// The workload every run here uses (times in ms; the simulator reads them as units).
    const MODEL: [&str; 10] = [
        "--m",
        "2",
        "--requests",
        "25",
        "--ncs",
        "1",
        "--cs",
        "0.5",
        "--cd",
        "0.2",
    ];

    /// `mpirun -n ranks lockbench mp-run --runtime mpi ARGS`. Open MPI refuses root and more
    /// ranks than cores unless told; MPICH ignores these variables.
    fn mpirun(ranks: usize, args: &[&str]) -> Output {
        let bin = assert_cmd::cargo::cargo_bin("lockbench");
        std::process::Command::new("mpirun")
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
            .env("PRTE_MCA_rmaps_default_mapping_policy", ":oversubscribe")
            .args(["-n", &ranks.to_string()])
            .arg(bin)
            .args(["mp-run", "--runtime", "mpi"])
            .args(args)
            .output()
            .expect("mpirun on PATH (scripts/install-mpi.sh)")
    }

    fn runs(out: &Output) -> Vec<Value> {
        assert!(
            out.status.success(),
            "exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
            .as_array()
            .unwrap()
            .clone()
    }

    fn sim(args: &[&str]) -> Vec<Value> {
        let out = lockbench()
            .arg("sim")
            .args(args)
            .args(["--format", "json"])
            .output()
            .unwrap();
        runs(&out)
    }

    fn safe_and_live(r: &Value) {
        assert_eq!(r["runtime"], "mpi", "{r}");
        assert_eq!(r["safety_violations"], 0, "{r}");
        assert!(r["liveness_failure"].is_null(), "{r}");
        let err = r["clock_sync_error_ms"].as_f64().unwrap();
        assert!((0.0..1e3).contains(&err), "{r}");
        let by_rank = r["clock_sync_error_by_rank_ms"].as_array().unwrap();
        assert_eq!(by_rank.len(), r["ranks"].as_u64().unwrap() as usize, "{r}");
        assert_eq!(by_rank[0], 0.0, "{r}");
        let hosts = r["hosts"].as_array().unwrap();
        assert_eq!(hosts.len(), by_rank.len(), "{r}");
        assert!(hosts.iter().all(|h| !h.as_str().unwrap().is_empty()), "{r}");
    }

    #[test]
    fn every_algorithm_is_safe_and_live_on_four_ranks() {
        let mut args = vec![
            "--algo",
            "suzuki-kasami,ricart-agrawala,token-gme,token-gme-fifo,token-gme-bounded,ra1,ra2,lmutin",
            "--n",
            "4",
            "--topology",
            "ring",
            "--format",
            "json",
        ];
        args.extend(MODEL);
        let rs = runs(&mpirun(4, &args));
        assert_eq!(rs.len(), 8);
        for r in &rs {
            safe_and_live(r);
            assert_eq!(r["ranks"], 4, "{r}");
            assert_eq!(r["procs_per_rank"], 1, "{r}");
            if r["algo"] != "lmutin" {
                // Every process entered its 25 critical sections.
                assert_eq!(r["requests"], 100, "{r}");
            }
            let n = 4.0;
            let max = r["messages_per_request_max"].as_f64().unwrap();
            match r["algo"].as_str().unwrap() {
                "suzuki-kasami" => assert!(max <= n, "{r}"),
                // n − 1 REQUEST + 1 TOKEN + n − 1 RELEASE.
                "token-gme" | "token-gme-fifo" => assert!(max <= 2.0 * n - 1.0, "{r}"),
                _ => {}
            }
        }
    }

    #[test]
    fn lkcs_is_safe_and_live_on_a_complete_graph() {
        // On a complete graph LKCS is live with its default bounds (the simulator finds it
        // live on every seed).
        let mut args = vec![
            "--algo",
            "lkcs",
            "--n",
            "4",
            "--topology",
            "complete",
            "--format",
            "json",
        ];
        args.extend(MODEL);
        let rs = runs(&mpirun(4, &args));
        assert_eq!(rs.len(), 1);
        safe_and_live(&rs[0]);
    }

    #[test]
    fn lkcs_is_safe_and_live_on_a_ring_with_both_bounds_active() {
        // A ring of 4 with l = 1, k = 3: both bounds bind, and some process can always move
        // (with k = 2 every configuration of a 4-ring freezes, which `sim` refuses).
        let mut args = vec![
            "--algo",
            "lkcs",
            "--n",
            "4",
            "--topology",
            "ring",
            "--l",
            "1",
            "--k",
            "3",
            "--format",
            "json",
        ];
        args.extend(MODEL);
        let rs = runs(&mpirun(4, &args));
        assert_eq!(rs.len(), 1);
        safe_and_live(&rs[0]);
    }

    #[test]
    fn permission_algorithms_send_what_the_simulator_sends() {
        // Ricart-Agrawala and RA1 send exactly n − 1 REQUEST and n − 1 REPLY per request,
        // whatever the order of deliveries: the same seeded requests give the same counts.
        let mut args = vec!["--algo", "ricart-agrawala,ra1", "--n", "4", "--seed", "7"];
        args.extend(MODEL);
        let expected = sim(&args);
        args.extend(["--format", "json"]);
        let got = runs(&mpirun(4, &args));
        assert_eq!(got.len(), expected.len());
        for (g, e) in got.iter().zip(&expected) {
            safe_and_live(g);
            for k in [
                "algo",
                "requests",
                "messages_per_request_mean",
                "messages_per_request_max",
                "messages_per_request_max_with_self",
                "self_messages_per_request_mean",
                "messages_by_kind",
                "message_size_mean",
                "message_ints_per_request_mean",
            ] {
                assert_eq!(g[k], e[k], "{k}: mpi {g} sim {e}");
            }
            assert_eq!(g["messages_per_request_mean"], 6.0, "{g}");
        }
    }

    #[test]
    fn several_processes_per_rank() {
        let mut args = vec![
            "--algo",
            "token-gme,ricart-agrawala",
            "--n",
            "6",
            "--procs-per-rank",
            "3",
            "--format",
            "json",
        ];
        args.extend(MODEL);
        for r in runs(&mpirun(2, &args)) {
            safe_and_live(&r);
            assert_eq!(r["procs_per_rank"], 3, "{r}");
            assert_eq!(r["requests"], 150, "{r}");
        }
    }

    #[test]
    fn a_stuck_run_stops_cleanly_and_says_so() {
        // A watchdog of 1 µs against critical sections of 5 ms on average: some process waits
        // past it, its rank tells rank 0, and every rank stops and reports.
        let out = mpirun(
            4,
            &[
                "--algo",
                "ricart-agrawala",
                "--n",
                "4",
                "--watchdog",
                "0.000001",
                "--cs",
                "5",
                "--ncs",
                "0",
                "--format",
                "json",
            ],
        );
        assert_eq!(out.status.code(), Some(1));
        let r: Value = serde_json::from_slice::<Value>(&out.stdout).unwrap()[0].clone();
        let l = r["liveness_failure"].as_str().unwrap();
        assert!(l.contains("watchdog 0.000001 s"), "{r}");
        assert_eq!(r["safety_violations"], 0, "{r}");
    }

    #[test]
    fn without_n_the_ranks_are_the_processes() {
        // `mpirun -n 4 ... --algo token-gme`: four ranks mean four processes; with
        // --procs-per-rank 2, two ranks mean four too.
        let mut args = vec!["--algo", "token-gme", "--format", "json"];
        args.extend(MODEL);
        let r = &runs(&mpirun(4, &args))[0];
        safe_and_live(r);
        assert_eq!(r["ranks"], 4, "{r}");
        assert_eq!(r["n"], 4, "{r}");
        assert_eq!(r["requests"], 100, "{r}");
        args.extend(["--procs-per-rank", "2"]);
        let r = &runs(&mpirun(2, &args))[0];
        safe_and_live(r);
        assert_eq!(r["n"], 4, "{r}");
        assert_eq!(r["procs_per_rank"], 2, "{r}");
    }

    #[test]
    fn a_process_count_that_does_not_fit_the_ranks_is_bad_input() {
        let out = mpirun(2, &["--algo", "ra1", "--n", "3"]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("--n 3"), "{err}");
    }
}
