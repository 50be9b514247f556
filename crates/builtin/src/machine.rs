//! What this process may use of the machine: its cores and its memory,
//! and a GUI's `Threads` and `Hash` held to them ([`Held`]).
//!
//! Memory is the machine's (`MemTotal`) or, lower, the limit of the
//! process's own memory control group and of every group above it (cgroup
//! v2 `memory.max`, v1 `memory.limit_in_bytes`), found through
//! `/proc/self/cgroup` and `/proc/self/mountinfo` as a container (`docker
//! run --memory=8g`), a systemd slice or a hand-made group sets it. Reading
//! only the hierarchy's top file missed a group the process was put in: a
//! 65 536 MB `Hash` was held to half the machine's 24 GB, and the kernel
//! killed mpcmc in its 8 GB group.

use std::{
    path::{Path, PathBuf},
    sync::OnceLock,
};

/// The cores this process may run on (its CPU affinity and cgroup quota
/// count): more search threads than this only share them, and on a clock
/// they lose time to the scheduler (`Threads` 256 on 2 cores took 8.8 s
/// of a 1 s clock). At least 1. Read once: it is asked at every `go`.
pub fn machine_cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// The memory this process may use, and what limits it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Memory {
    /// In MB.
    pub mb: usize,
    /// The limit is its control group's, below the machine's memory.
    pub cgroup: bool,
}

/// The memory this process may use: the machine's, or its control groups'
/// limit when lower; `None` where neither can be read. Read once.
pub fn machine_memory() -> Option<Memory> {
    static MEMORY: OnceLock<Option<Memory>> = OnceLock::new();
    *MEMORY.get_or_init(|| {
        let read = |path: &Path| std::fs::read_to_string(path).ok();
        let total = read(Path::new("/proc/meminfo")).and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb / 1024)
        });
        let group = match (
            read(Path::new("/proc/self/cgroup")),
            read(Path::new("/proc/self/mountinfo")),
        ) {
            (Some(groups), Some(mounts)) => cgroup_limit_mb(&groups, &mounts, read),
            _ => None,
        };
        within(total, group)
    })
}

/// The lower of the machine's memory and a control group's limit.
fn within(total: Option<usize>, group: Option<usize>) -> Option<Memory> {
    match (total, group) {
        (Some(total), Some(group)) if group < total => Some(Memory {
            mb: group,
            cgroup: true,
        }),
        (Some(mb), _) => Some(Memory { mb, cgroup: false }),
        (None, Some(mb)) => Some(Memory { mb, cgroup: true }),
        (None, None) => None,
    }
}

/// The memory controller's hierarchy a mount shows: cgroup v2 (one
/// unified hierarchy) or v1's `memory` one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hierarchy {
    V2,
    V1,
}

impl Hierarchy {
    /// The file that holds a group's limit.
    fn limit_file(self) -> &'static str {
        match self {
            Hierarchy::V2 => "memory.max",
            Hierarchy::V1 => "memory.limit_in_bytes",
        }
    }
}

/// The lowest memory limit, in MB, on this process's group and every group
/// above it that a mount shows, from the text of `/proc/self/cgroup`
/// (`groups`) and `/proc/self/mountinfo` (`mounts`); `read` reads a file.
/// `None`: no limit (v2 `max`, v1's page-rounded largest number) or none
/// readable.
fn cgroup_limit_mb(
    groups: &str,
    mounts: &str,
    read: impl Fn(&Path) -> Option<String>,
) -> Option<usize> {
    // `ID:controllers:path`; v2's line is `0::path`.
    let path_in = |hierarchy: Hierarchy| {
        groups.lines().find_map(|line| {
            let mut fields = line.splitn(3, ':');
            let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
            let ours = match hierarchy {
                Hierarchy::V2 => controllers.is_empty(),
                Hierarchy::V1 => controllers.split(',').any(|c| c == "memory"),
            };
            ours.then(|| path.to_owned())
        })
    };
    let mut lowest: Option<u64> = None;
    for (hierarchy, root, mount_point) in memory_mounts(mounts) {
        let Some(path) = path_in(hierarchy) else {
            continue;
        };
        // The mount shows the hierarchy from `root` down (a container sees
        // its own group as the top).
        let Ok(below) = Path::new(&path).strip_prefix(root) else {
            continue;
        };
        let mut dir = mount_point.join(below);
        loop {
            let limit = read(&dir.join(hierarchy.limit_file()))
                .and_then(|text| text.trim().parse::<u64>().ok());
            if let Some(limit) = limit {
                lowest = Some(lowest.map_or(limit, |l| l.min(limit)));
            }
            if dir == mount_point || !dir.pop() {
                break;
            }
        }
    }
    // v1 writes "no limit" as the largest page-aligned i64.
    let mb = lowest? / (1024 * 1024);
    (mb < (1 << 40)).then_some(mb as usize)
}

/// The mounts of the memory controller's hierarchies, from
/// `/proc/self/mountinfo`: which, the group they show as their top, and
/// where they are mounted.
fn memory_mounts(mounts: &str) -> Vec<(Hierarchy, &str, PathBuf)> {
    mounts
        .lines()
        .filter_map(|line| {
            // `ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] -
            // FSTYPE SOURCE SUPER_OPTIONS`
            let (head, tail) = line.split_once(" - ")?;
            let head: Vec<&str> = head.split(' ').collect();
            let mut tail = tail.split(' ');
            let (fstype, _, super_options) = (tail.next()?, tail.next()?, tail.next()?);
            let hierarchy = match fstype {
                "cgroup2" => Hierarchy::V2,
                "cgroup" if super_options.split(',').any(|o| o == "memory") => Hierarchy::V1,
                _ => return None,
            };
            let (root, mount_point) = (*head.get(3)?, *head.get(4)?);
            Some((hierarchy, root, PathBuf::from(unescape(mount_point))))
        })
        .collect()
}

/// A mountinfo path with its octal escapes (`\040` for a space) undone.
fn unescape(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|d| {
            let d = std::str::from_utf8(d).ok()?;
            u8::from_str_radix(d, 8).ok()
        });
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A GUI's setting held to what this machine has: the value to use and,
/// when that is less than asked, the line that says so (an `info string`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub value: usize,
    pub note: Option<String>,
}

/// `Hash` as a GUI set it (MB), held to half of the memory this process
/// may use ([`machine_memory`]). A table the process cannot hold was
/// killed by the kernel as it filled (65 536 MB on 24 GB; 12 052 MB in an
/// 8 GB group).
pub fn usable_hash_mb(asked: usize) -> Held {
    hash_within(asked, machine_memory())
}

/// [`usable_hash_mb`] with `memory` (`None`: unknown, as asked).
fn hash_within(asked: usize, memory: Option<Memory>) -> Held {
    match memory {
        Some(Memory { mb, cgroup }) if asked > mb / 2 => {
            let value = (mb / 2).max(1);
            let whose = if cgroup {
                format!("the {mb} MB limit of this process's memory control group")
            } else {
                format!("this machine's {mb} MB")
            };
            Held {
                value,
                note: Some(format!(
                    "Hash {asked} MB is more than {whose} can hold: {value} MB used"
                )),
            }
        }
        _ => Held {
            value: asked,
            note: None,
        },
    }
}

/// `Threads` as a GUI set it, held to [`machine_cores`].
pub fn usable_threads(asked: usize) -> Held {
    let cores = machine_cores();
    Held {
        value: asked.clamp(1, cores),
        note: (asked > cores)
            .then(|| format!("Threads {asked} is more than the {cores} cores here: {cores} used")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn hash_and_threads_are_held_to_the_machine() {
        let machine = |mb| Some(Memory { mb, cgroup: false });
        // 65 536 MB on 24 GB: half the machine.
        let held = hash_within(65_536, machine(24_000));
        assert_eq!(held.value, 12_000);
        assert!(held.note.is_some_and(|n| n.contains("machine's 24000 MB")));
        assert_eq!(hash_within(256, machine(24_000)).value, 256);
        assert_eq!(hash_within(256, machine(24_000)).note, None);
        assert_eq!(hash_within(65_536, None).value, 65_536);
        // In an 8 GB group: half the group, and said so.
        let group = Some(Memory {
            mb: 8192,
            cgroup: true,
        });
        let held = hash_within(65_536, group);
        assert_eq!(held.value, 4096);
        assert!(held.note.is_some_and(|n| n.contains("8192 MB limit")));
        // This machine's figures are read (Linux).
        if cfg!(target_os = "linux") {
            assert!(machine_memory().is_some_and(|m| m.mb > 0));
        }
        assert!(machine_cores() >= 1);
        let cores = machine_cores();
        assert_eq!(usable_threads(cores + 1).value, cores);
        assert!(usable_threads(cores + 1).note.is_some());
        assert_eq!(usable_threads(1).value, 1);
        assert_eq!(usable_threads(1).note, None);
    }

    #[test]
    fn the_lower_of_the_machine_and_the_group_counts() {
        let m = |mb, cgroup| Some(Memory { mb, cgroup });
        assert_eq!(within(Some(24_000), Some(8192)), m(8192, true));
        assert_eq!(within(Some(24_000), Some(30_000)), m(24_000, false));
        assert_eq!(within(Some(24_000), None), m(24_000, false));
        assert_eq!(within(None, Some(8192)), m(8192, true));
        assert_eq!(within(None, None), None);
    }

    /// The limit files of a few groups, as `read` sees them.
    fn files(limits: &[(&str, &str)]) -> impl Fn(&Path) -> Option<String> + use<> {
        let map: HashMap<PathBuf, String> = limits
            .iter()
            .map(|(p, v)| (PathBuf::from(p), format!("{v}\n")))
            .collect();
        move |p: &Path| map.get(p).cloned()
    }

    const GIB: &str = "1073741824";
    const V1_UNLIMITED: &str = "9223372036854771712";

    #[test]
    fn a_v1_group_the_process_was_put_in_is_read_with_those_above_it() {
        // This machine's layout (cgroup v1, a group two below the top).
        let groups = "9:name=systemd:/\n4:memory:/process_api/b60e/test\n0::/\n";
        let mounts = "31 25 0:28 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                      35 25 0:32 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let m = "/sys/fs/cgroup/memory";
        let read = files(&[
            (&format!("{m}/memory.limit_in_bytes"), V1_UNLIMITED),
            (
                &format!("{m}/process_api/memory.limit_in_bytes"),
                V1_UNLIMITED,
            ),
            (
                &format!("{m}/process_api/b60e/test/memory.limit_in_bytes"),
                "8589934592",
            ),
        ]);
        assert_eq!(cgroup_limit_mb(groups, mounts, &read), Some(8192));
        let read = files(&[
            (&format!("{m}/memory.limit_in_bytes"), V1_UNLIMITED),
            (
                &format!("{m}/process_api/b60e/test/memory.limit_in_bytes"),
                "8589934592",
            ),
            // A lower limit above the group holds it too.
            (
                &format!("{m}/process_api/memory.limit_in_bytes"),
                "4294967296",
            ),
        ]);
        assert_eq!(cgroup_limit_mb(groups, mounts, &read), Some(4096));
        // No limit anywhere: none.
        let read = files(&[(&format!("{m}/memory.limit_in_bytes"), V1_UNLIMITED)]);
        assert_eq!(cgroup_limit_mb(groups, mounts, &read), None);
    }

    #[test]
    fn a_v2_group_and_a_container_that_sees_its_group_as_the_top() {
        // A systemd slice on a v2 machine: the group and the slice above.
        let groups = "0::/user.slice/job.scope\n";
        let mounts = "24 30 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
        let read = files(&[
            ("/sys/fs/cgroup/user.slice/job.scope/memory.max", "max"),
            ("/sys/fs/cgroup/user.slice/memory.max", "8589934592"),
        ]);
        assert_eq!(cgroup_limit_mb(groups, mounts, &read), Some(8192));
        // Docker with a cgroup namespace: `0::/`, the group mounted as the
        // top.
        let groups = "0::/\n";
        let read = files(&[("/sys/fs/cgroup/memory.max", "8589934592")]);
        assert_eq!(cgroup_limit_mb(groups, mounts, &read), Some(8192));
        // Docker on v1 without one: the path is the host's, the mount's
        // root that same group.
        let groups = "5:memory:/docker/abc\n";
        let mounts = "40 35 0:40 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n";
        let read = files(&[("/sys/fs/cgroup/memory/memory.limit_in_bytes", "8589934592")]);
        assert_eq!(cgroup_limit_mb(groups, mounts, &read), Some(8192));
        // Another container's group whose name only starts the same.
        assert_eq!(
            cgroup_limit_mb("5:memory:/docker/abcdef\n", mounts, &read),
            None
        );
        // A mount point with a space in it.
        let groups = "0::/g\n";
        let mounts = "24 30 0:22 / /mnt/c\\040g rw - cgroup2 cgroup2 rw\n";
        let read = files(&[("/mnt/c g/g/memory.max", GIB)]);
        assert_eq!(cgroup_limit_mb(groups, mounts, &read), Some(1024));
    }
}
