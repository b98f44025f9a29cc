//! Locks written in C: a shared object implementing `include/lockbench.h`, named on the command
//! line as `plugin:PATH`. It is loaded once per process (cached by its canonical path, never
//! unloaded), its descriptor checked before anything runs (each fault one line naming the file,
//! a [`UsageError`]), and joined to the registry as an entry whose bench is the passage loop
//! monomorphised for [`PluginLock`].

mod abi;
mod lock;

use std::ffi::{c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

pub use lock::PluginLock;

use super::LockEntry;
use crate::error::UsageError;
use crate::locks::{LockInfo, Params, Problem};
use crate::runner::exec::{run_typed, RunFailure};

/// The prefix of a plug-in's lock name on the command line.
pub const PREFIX: &str = "plugin:";

/// A loaded plug-in: its file, what it says of its lock, and its functions.
pub struct Plugin {
    /// The canonical path it was loaded from.
    pub path: PathBuf,
    /// Its lock as the registry describes locks.
    pub info: LockInfo,
    /// The ABI version its descriptor declares.
    pub abi_version: u32,
    init: abi::InitFn,
    enter: abi::EnterFn,
    exit: abi::ExitFn,
    destroy: abi::DestroyFn,
}

/// Every plug-in loaded by this process.
static LOADED: Mutex<Vec<Arc<Plugin>>> = Mutex::new(Vec::new());

/// The registry entry of the plug-in at `path` (what follows `plugin:`), loading it on first use.
pub fn entry(path: &str) -> Result<LockEntry, UsageError> {
    let plugin = load(path)?;
    Ok(make_entry(plugin))
}

/// The entry of a loaded plug-in: no scheduled or counting build (a C lock is not written
/// over the register abstraction); the bench is the passage loop instantiated for
/// [`PluginLock`], after one `init` for the run's sizes so that a refusal is a failed run
/// with the plug-in's reason, not a panic.
fn make_entry(plugin: Arc<Plugin>) -> LockEntry {
    let native = plugin.clone();
    let bench = plugin.clone();
    LockEntry {
        info: plugin.info.clone(),
        native: Arc::new(move |p: &Params| -> Box<dyn crate::locks::Lock> {
            Box::new(built(&native, p))
        }),
        bench: Arc::new(move |spec, kind| {
            let probe = Params::new(spec.slots.max(spec.threads), spec.k, spec.policy);
            PluginLock::new(bench.clone(), &probe).map_err(|why| {
                RunFailure(format!(
                    "{}: {why} (for n = {}, k = {})",
                    bench.describe(),
                    probe.n,
                    probe.k
                ))
            })?;
            let lib = bench.clone();
            run_typed(spec, kind, move |p| built(&lib, p))
        }),
        scheduled: None,
        counting: None,
    }
}

/// The plug-in's lock for `params`; `init` already succeeded for these sizes (at load or in
/// the bench's probe), so a refusal now breaks the ABI's contract.
fn built(plugin: &Arc<Plugin>, params: &Params) -> PluginLock {
    PluginLock::new(plugin.clone(), params)
        .unwrap_or_else(|why| panic!("{}: {why}", plugin.describe()))
}

impl Plugin {
    /// `plugin:PATH`, as errors name it.
    pub fn describe(&self) -> String {
        format!("{PREFIX}{}", self.path.display())
    }
}

/// Loads the plug-in at `path` once per process (by canonical path) and checks it.
pub fn load(path: &str) -> Result<Arc<Plugin>, UsageError> {
    let bad = |what: String| UsageError(format!("{PREFIX}{path}: {what}"));
    if path.is_empty() {
        return Err(UsageError(format!(
            "{PREFIX} needs the path of a shared object (e.g. {PREFIX}target/c-examples/libmcs.so)"
        )));
    }
    let canonical = std::fs::canonicalize(path).map_err(|e| {
        bad(format!(
            "cannot open it ({}): give the path of a shared object built against include/lockbench.h",
            io_reason(&e)
        ))
    })?;
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = loaded.iter().find(|p| p.path == canonical) {
        return Ok(p.clone());
    }
    let plugin = open(&canonical).map_err(bad)?;
    if let Some(other) = loaded.iter().find(|p| p.info.name == plugin.info.name) {
        return Err(bad(format!(
            "its lock is named {:?}, as the lock of {} already loaded: rename one in its descriptor",
            plugin.info.name,
            other.path.display()
        )));
    }
    let plugin = Arc::new(plugin);
    probe(&plugin).map_err(bad)?;
    loaded.push(plugin.clone());
    Ok(plugin)
}

/// The reason of an I/O error without the "(os error N)" tail.
fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    s.split(" (os error").next().unwrap_or(&s).to_lowercase()
}

/// `init` for one process (k = 1), then `destroy`: a plug-in that refuses every lock is
/// reported before anything runs.
fn probe(plugin: &Arc<Plugin>) -> Result<(), String> {
    let params = Params::new(1, 1, crate::mem::WaitPolicy::Spin);
    PluginLock::new(plugin.clone(), &params)
        .map(drop)
        .map_err(|why| format!("{why} (for n = 1, k = 1)"))
}

/// dlopen's last error, as one line.
fn dl_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated string valid until the next dl call on
    // this thread; it is copied at once.
    let msg = unsafe { libc::dlerror() };
    if msg.is_null() {
        return "unknown reason".into();
    }
    // SAFETY: non-null, NUL-terminated (above).
    let s = unsafe { CStr::from_ptr(msg) }
        .to_string_lossy()
        .into_owned();
    s.lines().next().unwrap_or("").to_string()
}

/// Opens the shared object, finds its descriptor and checks it. The object is never closed:
/// a loaded plug-in lives as long as the process.
fn open(path: &Path) -> Result<Plugin, String> {
    let cpath = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| "its path holds a NUL byte".to_string())?;
    // SAFETY: a NUL-terminated path; RTLD_NOW resolves every symbol now, so an object with
    // an unresolved dependency fails here rather than mid-run.
    let handle = unsafe { libc::dlopen(cpath.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        let why = dl_error();
        let why = why
            .strip_prefix(&format!("{}: ", path.display()))
            .unwrap_or(&why);
        return Err(format!(
            "not a loadable shared object ({why}): build it with `cc -shared -fPIC` (see docs/plugins.md)"
        ));
    }
    let symbol = CString::new(abi::SYMBOL).expect("no NUL");
    // SAFETY: a live handle and a NUL-terminated name.
    let sym: *mut c_void = unsafe { libc::dlsym(handle, symbol.as_ptr()) };
    if sym.is_null() {
        return Err(format!(
            "no symbol `{}`: a plug-in exports `const struct lockbench_plugin *{}(void)` (include/lockbench.h)",
            abi::SYMBOL,
            abi::SYMBOL
        ));
    }
    // SAFETY: the ABI says the symbol is a function of this type.
    let describe: abi::DescribeFn = unsafe { std::mem::transmute(sym) };
    // SAFETY: calling it as the ABI says.
    let d = unsafe { describe() };
    if d.is_null() {
        return Err(format!("`{}()` returned NULL", abi::SYMBOL));
    }
    // SAFETY: every version's descriptor starts with its version and size (two u32); the rest
    // is read only once the size says it is there.
    let (version, size) = unsafe {
        let head = d.cast::<u32>();
        (head.read(), head.add(1).read())
    };
    if version != abi::ABI_VERSION {
        return Err(format!(
            "built for ABI version {version}, and this lockbench reads version {}: rebuild it against this lockbench's include/lockbench.h",
            abi::ABI_VERSION
        ));
    }
    if (size as usize) < abi::DESCRIPTOR_SIZE_V1 {
        return Err(format!(
            "its descriptor declares {size} bytes, fewer than version {}'s {}: set .size = sizeof(struct lockbench_plugin)",
            abi::ABI_VERSION,
            abi::DESCRIPTOR_SIZE_V1
        ));
    }
    // SAFETY: the descriptor is at least as large as version 1's, which this type lays out.
    let d = unsafe { &*d };
    validate(path, d)
}

/// A descriptor's string field, or `None` when null.
fn text(p: *const std::ffi::c_char, field: &str) -> Result<Option<String>, String> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: the ABI makes each string field null or a NUL-terminated string in static storage.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str()
        .map(|s| Some(s.lines().next().unwrap_or("").to_string()))
        .map_err(|_| format!("its {field} is not UTF-8"))
}

/// Checks a version-1 descriptor: name, problem, claims, functions.
fn validate(path: &Path, d: &abi::Descriptor) -> Result<Plugin, String> {
    let name = text(d.name, "name")?.ok_or("its descriptor has no name (NULL)")?;
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(format!(
            "its name {name:?} is not 1 to 64 letters, digits, '-', '_' or '.'"
        ));
    }
    if super::find(&name).is_some() {
        return Err(format!(
            "its lock is named {name:?}, the name of a built-in lock: rename it in its descriptor"
        ));
    }
    let problem = match d.problem {
        abi::PROBLEM_MUTEX => Problem::Mutex,
        abi::PROBLEM_GME => Problem::Gme,
        abi::PROBLEM_KEXCLUSION => Problem::KExclusion,
        other => {
            return Err(format!(
                "unknown problem kind {other} (LOCKBENCH_MUTEX = 1, LOCKBENCH_GME = 2, LOCKBENCH_KEXCLUSION = 3)"
            ))
        }
    };
    if d.claims & !abi::CLAIMS_V1 != 0 {
        return Err(format!(
            "unknown claim bits {:#x} (version {} knows LOCKBENCH_CLAIM_FCFS, _BOUNDED, _NOT_A_LOCK)",
            d.claims & !abi::CLAIMS_V1,
            abi::ABI_VERSION
        ));
    }
    let missing = [
        ("init", d.init.is_none()),
        ("enter", d.enter.is_none()),
        ("exit", d.exit.is_none()),
        ("destroy", d.destroy.is_none()),
    ]
    .into_iter()
    .filter(|(_, none)| *none)
    .map(|(f, _)| f)
    .collect::<Vec<_>>();
    if !missing.is_empty() {
        return Err(format!(
            "its descriptor has no {} function (NULL)",
            missing.join(", ")
        ));
    }
    let source = text(d.source, "source")?.unwrap_or_else(|| "C plug-in".into());
    let notes = text(d.notes, "notes")?.unwrap_or_default();
    Ok(Plugin {
        path: path.to_path_buf(),
        info: info(name, problem, d.claims, source, notes),
        abi_version: d.abi_version,
        init: d.init.expect("checked"),
        enter: d.enter.expect("checked"),
        exit: d.exit.expect("checked"),
        destroy: d.destroy.expect("checked"),
    })
}

/// What the registry says of a plug-in's lock. Its strings are leaked, once per plug-in
/// loaded (a process loads each at most once), for `LockInfo`'s `&'static str`.
fn info(name: String, problem: Problem, claims: u32, source: String, notes: String) -> LockInfo {
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    LockInfo {
        name: leak(name),
        problem,
        source: leak(source),
        fcfs: claims & abi::CLAIM_FCFS != 0,
        bounded: claims & abi::CLAIM_BOUNDED != 0,
        rmr: "n/a (a C plug-in: no register abstraction to count)",
        safe: claims & abi::CLAIM_NOT_A_LOCK == 0,
        notes: leak(notes),
        // No RMR bound, mutants or scripted worst case: those need the register abstraction.
        ..LockInfo::baseline("", problem, false, "")
    }
}

/// Whether the process has the flag type the ABI's abort pointer reads (a byte).
const _: () = assert!(std::mem::size_of::<AtomicBool>() == 1);
