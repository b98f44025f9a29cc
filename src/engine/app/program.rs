//! What `app` checks before running anything: the program exists and can be interposed (an
//! ELF executable asking for a dynamic loader, or a script whose interpreter is one), and the
//! interposer library is there.

use std::path::{Path, PathBuf};

use crate::error::UsageError;

/// Finds `name` as `execvp` would: a path when it has a `/`, else the first executable on PATH.
pub fn resolve(name: &str) -> Result<PathBuf, UsageError> {
    let executable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let found = if name.contains('/') {
        let p = PathBuf::from(name);
        executable(&p).then_some(p)
    } else {
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(name))
                .find(|p| executable(p))
        })
    };
    found.ok_or_else(|| {
        UsageError(format!(
            "program {name:?} not found (or not executable): give its path or a name on PATH"
        ))
    })
}

/// How an executable file is linked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linkage {
    /// An ELF file with a program interpreter (`PT_INTERP`) or a dynamic section: the loader
    /// honours `LD_PRELOAD`.
    Dynamic,
    /// An ELF file with neither: nothing loads the interposer into it.
    Static,
    /// A `#!` script: its interpreter (and what it runs) inherits `LD_PRELOAD`.
    Script,
    /// Not an ELF file or a script.
    Unknown,
}

/// Reads the ELF program headers of `bytes` (32- or 64-bit, either byte order).
pub fn linkage(bytes: &[u8]) -> Linkage {
    if bytes.starts_with(b"#!") {
        return Linkage::Script;
    }
    if bytes.len() < 52 || !bytes.starts_with(b"\x7fELF") {
        return Linkage::Unknown;
    }
    let wide = bytes[4] == 2;
    let little = bytes[5] == 1;
    let num = |at: usize, len: usize| -> Option<u64> {
        let b = bytes.get(at..at + len)?;
        let mut v = 0u64;
        for i in 0..len {
            let byte = if little { b[len - 1 - i] } else { b[i] };
            v = v << 8 | u64::from(byte);
        }
        Some(v)
    };
    let (phoff, phentsize, phnum) = if wide {
        (num(0x20, 8), num(0x36, 2), num(0x38, 2))
    } else {
        (num(0x1C, 4), num(0x2A, 2), num(0x2C, 2))
    };
    let (Some(phoff), Some(size), Some(count)) = (phoff, phentsize, phnum) else {
        return Linkage::Unknown;
    };
    const PT_DYNAMIC: u64 = 2;
    const PT_INTERP: u64 = 3;
    for i in 0..count {
        match num((phoff + i * size) as usize, 4) {
            Some(PT_DYNAMIC | PT_INTERP) => return Linkage::Dynamic,
            Some(_) => {}
            None => return Linkage::Unknown,
        }
    }
    Linkage::Static
}

/// Refuses a program the interposer cannot reach, in one line.
pub fn check_interposable(path: &Path) -> Result<(), UsageError> {
    let mut head = vec![0u8; 64 * 1024];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .map_err(|e| UsageError(format!("cannot read {}: {e}", path.display())))?;
    head.truncate(n);
    // Program headers usually follow the ELF header; read the whole file if they do not.
    let kind = match linkage(&head) {
        Linkage::Unknown if head.starts_with(b"\x7fELF") => {
            linkage(&std::fs::read(path).unwrap_or_default())
        }
        k => k,
    };
    match kind {
        Linkage::Dynamic | Linkage::Script => Ok(()),
        Linkage::Static => Err(UsageError(format!(
            "{} is statically linked: LD_PRELOAD cannot put another lock under its pthread calls; \
             give a dynamically linked build",
            path.display()
        ))),
        Linkage::Unknown => Err(UsageError(format!(
            "{} is neither an ELF executable nor a #! script: give a program to run",
            path.display()
        ))),
    }
}

/// The interposer library: `LOCKBENCH_INTERPOSE`, else `liblockbench_interpose.so` beside the
/// running lockbench binary (cargo puts both in target/debug or target/release).
pub fn interposer() -> Result<PathBuf, UsageError> {
    if let Some(p) = std::env::var_os("LOCKBENCH_INTERPOSE").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(UsageError(format!(
                "LOCKBENCH_INTERPOSE={} is not a file: point it at liblockbench_interpose.so",
                p.display()
            )))
        };
    }
    let exe = std::env::current_exe().unwrap_or_default();
    let dir = exe.parent().unwrap_or(Path::new("."));
    // Beside the binary, or one level up (a test binary runs from target/*/deps).
    [dir.to_path_buf(), dir.join("..")]
        .iter()
        .map(|d| d.join("liblockbench_interpose.so"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            UsageError(format!(
                "liblockbench_interpose.so is not beside {}: build it with `cargo build` (the \
                 workspace builds it) or set LOCKBENCH_INTERPOSE to its path",
                exe.display()
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_test_binary_is_dynamic_and_a_script_is_a_script() {
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(linkage(&me), Linkage::Dynamic);
        assert_eq!(linkage(b"#!/bin/sh\necho hi\n"), Linkage::Script);
        assert_eq!(linkage(b"hello"), Linkage::Unknown);
    }

    #[test]
    fn an_elf_without_interp_or_dynamic_is_static() {
        // A 64-bit little-endian ELF header with one PT_LOAD program header.
        let mut elf = vec![0u8; 64 + 56];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        elf[0x20] = 64; // e_phoff
        elf[0x36] = 56; // e_phentsize
        elf[0x38] = 1; // e_phnum
        elf[64] = 1; // PT_LOAD
        assert_eq!(linkage(&elf), Linkage::Static);
        elf[64] = 3; // PT_INTERP
        assert_eq!(linkage(&elf), Linkage::Dynamic);
    }
}
