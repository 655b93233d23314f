//! The fs gate: read-only, confined to the plugin's root (seed 001, "allow_fs").
//!
//! seed 001 canonicalises and then compares; a check followed by a separate open leaves a window
//! in which a component can be swapped for a symlink. So the path is resolved beneath an open
//! directory of the root one component at a time, `openat` with `O_NOFOLLOW` per component, as
//! cap-std does — never `openat2`, which Android's seccomp filter answers with SIGSYS.
//!
//! A symlink inside the root is followed when its target, resolved the same way from where the
//! link sits, stays inside the root: an absolute target must name a path under the root's
//! canonical path. `..` is resolved against the directories already opened (like a canonical
//! path), and refused when it would climb above the root.

use std::path::PathBuf;

use super::scope::CallScope;
use super::{Grants, MIB, decode_capped, denied};

/// `host-fs-read` for one plugin.
#[derive(Debug, Clone)]
pub struct FsGate {
    allow_fs: bool,
    root: PathBuf,
}

/// Why a read was refused; rendered as the `error: ` string by [`FsGate::read`].
#[cfg_attr(not(unix), allow(dead_code))]
#[derive(Debug)]
enum Refusal {
    Absolute,
    NulByte,
    Outside,
    NotFound,
    NotRegular,
    TooManyLinks,
    TooBig(u64),
    #[cfg(not(unix))]
    Unsupported,
    Io(std::io::Error),
    /// Outside the calling conversation's folders: the scope's `error: ` string.
    OutOfScope(String),
}

impl FsGate {
    /// The read cap: the same guest-side arena as the network body cap (seed 001).
    pub const READ_CAP: usize = MIB;

    /// `root` is the directory the plugin may read beneath (its install directory).
    pub fn new(grants: &Grants, root: impl Into<PathBuf>) -> Self {
        Self {
            allow_fs: grants.allow_fs,
            root: root.into(),
        }
    }

    /// Reads the file at `path`, relative to the root, as text (invalid UTF-8 is replaced), or
    /// returns an `error: ` string. The cap holds for the file and for the text alike.
    pub fn read(&self, path: &str) -> String {
        self.read_within(&CallScope::unbounded(), path)
    }

    /// [`FsGate::read`] for one call, also bounded by the calling conversation's folders
    /// (seed 003): the file the path resolves to must lie beneath one of them, checked after
    /// resolution (so a link inside the root cannot lead out of the scope) and before a byte is
    /// read.
    pub(crate) fn read_within(&self, scope: &CallScope, path: &str) -> String {
        if !self.allow_fs {
            return denied("file access", "allow_fs");
        }
        match self.read_beneath(scope, path) {
            Ok(bytes) => decode_capped(&bytes, Self::READ_CAP).unwrap_or_else(|decoded_len| {
                format!(
                    "error: file \"{path}\" exceeds 1 MiB once its invalid UTF-8 is replaced \
                     ({decoded_len} bytes, limit {})",
                    Self::READ_CAP
                )
            }),
            Err(refusal) => match refusal {
                Refusal::Absolute => format!(
                    "error: path \"{path}\" is absolute; give a path relative to this plugin's root"
                ),
                Refusal::NulByte => format!("error: path \"{path}\" contains a NUL byte"),
                Refusal::Outside => {
                    format!("error: path \"{path}\" resolves outside this plugin's root")
                }
                Refusal::NotFound => {
                    format!("error: path \"{path}\" does not exist in this plugin's root")
                }
                Refusal::NotRegular => format!("error: path \"{path}\" is not a regular file"),
                Refusal::TooManyLinks => {
                    format!("error: path \"{path}\" has too many levels of symbolic links")
                }
                Refusal::TooBig(size) => format!(
                    "error: file \"{path}\" exceeds 1 MiB ({size} bytes, limit {})",
                    Self::READ_CAP
                ),
                #[cfg(not(unix))]
                Refusal::Unsupported => {
                    "error: file access is not supported on this platform".to_owned()
                }
                Refusal::Io(err) => format!("error: could not read \"{path}\": {err}"),
                Refusal::OutOfScope(message) => message,
            },
        }
    }

    #[cfg(unix)]
    fn read_beneath(&self, scope: &CallScope, path: &str) -> Result<Vec<u8>, Refusal> {
        use std::io::Read;

        if path.starts_with('/') {
            return Err(Refusal::Absolute);
        }
        if path.contains('\0') {
            return Err(Refusal::NulByte);
        }
        let (file, resolved) = beneath::open(&self.root, path.as_bytes())?;
        let canonical_root = std::fs::canonicalize(&self.root).map_err(Refusal::Io)?;
        scope
            .check_path(&canonical_root.join(resolved), path)
            .map_err(Refusal::OutOfScope)?;
        let size = file.metadata().map_err(Refusal::Io)?.len();
        if size > Self::READ_CAP as u64 {
            return Err(Refusal::TooBig(size));
        }
        // The file may grow after the size check: read at most one byte past the cap.
        let mut bytes = Vec::new();
        file.take(Self::READ_CAP as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(Refusal::Io)?;
        if bytes.len() > Self::READ_CAP {
            return Err(Refusal::TooBig(bytes.len() as u64));
        }
        Ok(bytes)
    }

    #[cfg(not(unix))]
    fn read_beneath(&self, _scope: &CallScope, _path: &str) -> Result<Vec<u8>, Refusal> {
        Err(Refusal::Unsupported)
    }
}

#[cfg(unix)]
mod beneath {
    //! Resolution beneath a directory with `openat`, `fstatat` and `readlinkat` from the
    //! platform's libc (bionic on Android, libSystem on iOS).

    use std::collections::VecDeque;
    use std::ffi::{CStr, CString, OsStr};
    use std::fs::File;
    use std::io;
    use std::mem::MaybeUninit;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Path, PathBuf};

    use super::Refusal;

    /// Linux's ELOOP bound (MAXSYMLINKS), so a link cycle ends.
    const MAX_LINKS: usize = 40;
    /// PATH_MAX on Linux and Android; a longer link target is refused.
    const MAX_LINK_TARGET: usize = 4096;

    /// Opens the regular file at `path` (relative, no NUL) beneath `root`, and says where it
    /// resolved to, relative to the root: each directory entered and the file's name, after
    /// `..` and links.
    pub(super) fn open(root: &Path, path: &[u8]) -> Result<(File, PathBuf), Refusal> {
        let root_dir = File::open(root).map_err(Refusal::Io)?;
        // Directories opened so far, the root first; `..` pops one, and never the root.
        let mut opened: Vec<OwnedFd> = vec![root_dir.into()];
        // The names of the directories opened after the root, in step with `opened`.
        let mut names: Vec<Vec<u8>> = Vec::new();
        let mut pending: VecDeque<Vec<u8>> = components(path).collect();
        let mut links = 0;
        while let Some(name) = pending.pop_front() {
            if name == b".." {
                if opened.len() == 1 {
                    return Err(Refusal::Outside);
                }
                opened.pop();
                names.pop();
                continue;
            }
            let name = CString::new(name).map_err(|_| Refusal::NulByte)?;
            let dir = opened.last().expect("the root is never popped");
            let mode = stat_nofollow(dir, &name).map_err(not_found_or_io)?.st_mode & libc::S_IFMT;
            if mode == libc::S_IFLNK {
                links += 1;
                if links > MAX_LINKS {
                    return Err(Refusal::TooManyLinks);
                }
                let target = read_link(dir, &name).map_err(Refusal::Io)?;
                let target = if target.starts_with(b"/") {
                    // Only a target under the root's canonical path stays inside; resolve the
                    // rest from the root already open, not by that path.
                    let canonical_root = std::fs::canonicalize(root).map_err(Refusal::Io)?;
                    let inside = Path::new(OsStr::from_bytes(&target))
                        .strip_prefix(&canonical_root)
                        .map_err(|_| Refusal::Outside)?;
                    opened.truncate(1);
                    names.clear();
                    inside.as_os_str().as_bytes().to_vec()
                } else {
                    target
                };
                for component in components(&target).collect::<Vec<_>>().into_iter().rev() {
                    pending.push_front(component);
                }
            } else if mode == libc::S_IFDIR {
                if pending.is_empty() {
                    return Err(Refusal::NotRegular);
                }
                let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
                opened.push(open_at(dir, &name, flags).map_err(not_found_or_io)?);
                names.push(name.into_bytes());
            } else if mode == libc::S_IFREG {
                if !pending.is_empty() {
                    // A file used as a directory (`a.txt/b`).
                    return Err(Refusal::NotFound);
                }
                // O_NONBLOCK: should the entry be swapped for a FIFO after the stat, opening it
                // must not wait for a writer; the fstat below then refuses it.
                let flags = libc::O_RDONLY
                    | libc::O_NOFOLLOW
                    | libc::O_NONBLOCK
                    | libc::O_NOCTTY
                    | libc::O_CLOEXEC;
                let file = File::from(open_at(dir, &name, flags).map_err(not_found_or_io)?);
                if !file.metadata().map_err(Refusal::Io)?.is_file() {
                    return Err(Refusal::NotRegular);
                }
                let resolved: PathBuf = names
                    .iter()
                    .chain([&name.into_bytes()])
                    .map(|n| OsStr::from_bytes(n))
                    .collect();
                return Ok((file, resolved));
            } else {
                // FIFOs, sockets and devices are never opened.
                return Err(Refusal::NotRegular);
            }
        }
        // The path ended on a directory (``, `.`, `sub/..`).
        Err(Refusal::NotRegular)
    }

    fn components(path: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
        path.split(|&b| b == b'/')
            .filter(|c| !c.is_empty() && *c != b".")
            .map(<[u8]>::to_vec)
    }

    fn not_found_or_io(err: io::Error) -> Refusal {
        match err.raw_os_error() {
            Some(libc::ENOENT | libc::ENOTDIR) => Refusal::NotFound,
            _ => Refusal::Io(err),
        }
    }

    fn stat_nofollow(dir: &OwnedFd, name: &CStr) -> io::Result<libc::stat> {
        let mut stat = MaybeUninit::<libc::stat>::uninit();
        // SAFETY: `name` is NUL-terminated and `stat` is valid for one `struct stat` write.
        let rc = unsafe {
            libc::fstatat(
                dir.as_raw_fd(),
                name.as_ptr(),
                stat.as_mut_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fstatat returned 0, so it filled `stat`.
        Ok(unsafe { stat.assume_init() })
    }

    fn read_link(dir: &OwnedFd, name: &CStr) -> io::Result<Vec<u8>> {
        let mut target = vec![0u8; MAX_LINK_TARGET];
        // SAFETY: `name` is NUL-terminated and `target` is valid for `target.len()` bytes.
        let len = unsafe {
            libc::readlinkat(
                dir.as_raw_fd(),
                name.as_ptr(),
                target.as_mut_ptr().cast(),
                target.len(),
            )
        };
        let len = usize::try_from(len).map_err(|_| io::Error::last_os_error())?;
        if len == target.len() {
            return Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG));
        }
        target.truncate(len);
        Ok(target)
    }

    fn open_at(dir: &OwnedFd, name: &CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
        // SAFETY: `name` is NUL-terminated; no O_CREAT, so no mode argument is read.
        let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: openat returned a new descriptor that nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    struct Fixture {
        _tmp: tempfile::TempDir,
        gate: FsGate,
        root: PathBuf,
    }

    /// `<tmp>/root` with `a.txt`, `sub/b.txt`, and `<tmp>/secret.txt` outside the root.
    fn fixture() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("a.txt"), "alpha").unwrap();
        std::fs::write(root.join("sub/b.txt"), "beta").unwrap();
        std::fs::write(tmp.path().join("secret.txt"), "secret").unwrap();
        let grants = Grants {
            allow_fs: true,
            ..Grants::default()
        };
        Fixture {
            gate: FsGate::new(&grants, &root),
            root,
            _tmp: tmp,
        }
    }

    #[test]
    fn off_by_default() {
        let f = fixture();
        let gate = FsGate::new(&Grants::default(), &f.root);
        assert_eq!(
            gate.read("a.txt"),
            "error: file access denied (set allow_fs = true in this plugin's grants)"
        );
    }

    #[test]
    fn reads_inside_the_root() {
        let f = fixture();
        assert_eq!(f.gate.read("a.txt"), "alpha");
        assert_eq!(f.gate.read("./sub//b.txt"), "beta");
        assert_eq!(f.gate.read("sub/../a.txt"), "alpha");
    }

    #[test]
    fn dot_dot_above_the_root_is_refused() {
        let f = fixture();
        assert_eq!(
            f.gate.read("../secret.txt"),
            "error: path \"../secret.txt\" resolves outside this plugin's root"
        );
        assert!(
            f.gate
                .read("sub/../../secret.txt")
                .starts_with("error: path")
        );
    }

    #[test]
    fn absolute_paths_are_refused() {
        let f = fixture();
        let abs = f.root.join("a.txt");
        let abs = abs.to_str().unwrap();
        assert_eq!(
            f.gate.read(abs),
            format!(
                "error: path \"{abs}\" is absolute; give a path relative to this plugin's root"
            )
        );
    }

    #[test]
    fn symlinks_out_are_refused_and_within_are_followed() {
        let f = fixture();
        symlink("../secret.txt", f.root.join("out")).unwrap();
        symlink(
            f.root.parent().unwrap().join("secret.txt"),
            f.root.join("out_abs"),
        )
        .unwrap();
        symlink("/etc", f.root.join("etc")).unwrap();
        symlink("sub/b.txt", f.root.join("in")).unwrap();
        symlink(f.root.join("sub/b.txt"), f.root.join("in_abs")).unwrap();
        symlink("../a.txt", f.root.join("sub/up")).unwrap();
        symlink("sub", f.root.join("dir_link")).unwrap();
        assert_eq!(
            f.gate.read("out"),
            "error: path \"out\" resolves outside this plugin's root"
        );
        assert!(
            f.gate
                .read("out_abs")
                .ends_with("resolves outside this plugin's root")
        );
        assert!(
            f.gate
                .read("etc/passwd")
                .ends_with("resolves outside this plugin's root")
        );
        assert_eq!(f.gate.read("in"), "beta");
        assert_eq!(f.gate.read("in_abs"), "beta");
        assert_eq!(f.gate.read("sub/up"), "alpha");
        assert_eq!(f.gate.read("dir_link/b.txt"), "beta");
        assert_eq!(f.gate.read("dir_link/../a.txt"), "alpha");
    }

    #[test]
    fn a_symlink_cycle_ends() {
        let f = fixture();
        symlink("loop_b", f.root.join("loop_a")).unwrap();
        symlink("loop_a", f.root.join("loop_b")).unwrap();
        assert_eq!(
            f.gate.read("loop_a"),
            "error: path \"loop_a\" has too many levels of symbolic links"
        );
    }

    #[test]
    fn non_regular_files_are_refused() {
        let f = fixture();
        let _listener = std::os::unix::net::UnixListener::bind(f.root.join("sock")).unwrap();
        assert_eq!(
            f.gate.read("sock"),
            "error: path \"sock\" is not a regular file"
        );
        assert_eq!(
            f.gate.read("sub"),
            "error: path \"sub\" is not a regular file"
        );
        assert_eq!(f.gate.read(""), "error: path \"\" is not a regular file");
    }

    #[test]
    fn missing_files_are_named() {
        let f = fixture();
        assert_eq!(
            f.gate.read("nope.txt"),
            "error: path \"nope.txt\" does not exist in this plugin's root"
        );
        assert!(
            f.gate
                .read("a.txt/x")
                .ends_with("does not exist in this plugin's root")
        );
        assert_eq!(
            f.gate.read("a\0b"),
            "error: path \"a\0b\" contains a NUL byte"
        );
    }

    #[test]
    fn the_cap_holds_for_the_text_the_plugin_receives() {
        let f = fixture();
        // Each 0xFF becomes U+FFFD, three bytes: a 1 MiB file would be 3 MiB of text.
        std::fs::write(f.root.join("ff"), vec![0xff; MIB]).unwrap();
        assert_eq!(
            f.gate.read("ff"),
            "error: file \"ff\" exceeds 1 MiB once its invalid UTF-8 is replaced (3145728 \
             bytes, limit 1048576)"
        );
        // 349526 × 3 = 1048578 bytes of text, two over; one fewer byte is one under.
        std::fs::write(f.root.join("over"), vec![0xff; MIB / 3 + 1]).unwrap();
        assert_eq!(
            f.gate.read("over"),
            "error: file \"over\" exceeds 1 MiB once its invalid UTF-8 is replaced (1048578 \
             bytes, limit 1048576)"
        );
        std::fs::write(f.root.join("under"), vec![0xff; MIB / 3]).unwrap();
        assert_eq!(f.gate.read("under"), "\u{fffd}".repeat(MIB / 3));
    }

    #[test]
    fn reads_are_capped_at_one_mebibyte() {
        let f = fixture();
        std::fs::write(f.root.join("full"), vec![b'x'; MIB]).unwrap();
        std::fs::write(f.root.join("over"), vec![b'x'; MIB + 1]).unwrap();
        assert_eq!(f.gate.read("full").len(), MIB);
        assert_eq!(
            f.gate.read("over"),
            "error: file \"over\" exceeds 1 MiB (1048577 bytes, limit 1048576)"
        );
    }
}
