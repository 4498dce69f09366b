//! Network namespaces with run-unique names, made with iproute2 and
//! removed when dropped, and the leftovers of runs that were killed.
//!
//! A name is `ut-<pid>.<start>-<n>-<label>`: the owning process's id and
//! start time (clock ticks since boot, from /proc), so that a later run
//! can tell a live owner from a dead one whose id was reused, a counter
//! for several networks in one process, and what the namespace holds.

use crate::sys;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// Every namespace undertow makes has a name starting so.
pub const PREFIX: &str = "ut-";
const NETNS_DIR: &str = "/run/netns";

/// A process's start time in clock ticks since boot (field 22 of its stat).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(19)?.parse().ok()
}

/// A tag unique to this process and call: `ut-<pid>.<start>-<n>`.
pub fn run_tag() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let pid = std::process::id();
    let start = start_time(pid).unwrap_or(0);
    format!("{PREFIX}{pid}.{start}-{}", COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// The owner of a namespace name, if it is one of undertow's.
fn owner(name: &str) -> Option<(u32, u64)> {
    let rest = name.strip_prefix(PREFIX)?;
    let (owner, _) = rest.split_once('-')?;
    let (pid, start) = owner.split_once('.')?;
    Some((pid.parse().ok()?, start.parse().ok()?))
}

/// Whether the process that made namespace `name` is gone.
fn orphaned(name: &str) -> bool {
    match owner(name) {
        Some((pid, start)) => !(sys::process_exists(pid) && start_time(pid) == Some(start)),
        None => false,
    }
}

/// Runs `ip` with `args`; an error carries what it printed.
pub fn ip(args: &[&str], stdin: Option<&str>) -> io::Result<()> {
    let mut cmd = Command::new("ip");
    cmd.args(args).stdout(Stdio::null()).stderr(Stdio::piped());
    cmd.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    let mut child = cmd.spawn().map_err(|e| io::Error::new(e.kind(), format!("cannot run ip (iproute2): {e}")))?;
    if let (Some(text), Some(mut w)) = (stdin, child.stdin.take()) {
        w.write_all(text.as_bytes())?;
    }
    let out = child.wait_with_output()?;
    if out.status.success() {
        Ok(())
    } else {
        let msg = String::from_utf8_lossy(&out.stderr);
        Err(io::Error::other(format!("ip {}: {}", args.join(" "), msg.trim())))
    }
}

/// A network namespace this process made; removed when dropped.
#[derive(Debug)]
pub struct Namespace {
    name: String,
    handle: File,
}

impl Namespace {
    /// Makes namespace `name` (which must start with [`PREFIX`]).
    pub fn create(name: &str) -> io::Result<Namespace> {
        debug_assert!(name.starts_with(PREFIX));
        ip(&["netns", "add", name], None)?;
        match File::open(format!("{NETNS_DIR}/{name}")) {
            Ok(handle) => Ok(Namespace { name: name.to_string(), handle }),
            Err(e) => {
                let _ = ip(&["netns", "del", name], None);
                Err(e)
            }
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `f` on a thread inside the namespace: what it opens (sockets,
    /// devices) belongs to the namespace, and stays usable from anywhere.
    pub fn within<T: Send>(&self, f: impl FnOnce() -> io::Result<T> + Send) -> io::Result<T> {
        let ns = self.handle.as_fd();
        std::thread::scope(|s| {
            s.spawn(move || {
                sys::enter_netns(ns)?;
                f()
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("a thread inside a namespace panicked")))
        })
    }

    /// Runs `ip -n <name> -batch -` with one command per line.
    pub fn ip_batch(&self, lines: &[String]) -> io::Result<()> {
        ip(&["-n", &self.name, "-batch", "-"], Some(&(lines.join("\n") + "\n")))
    }

    /// Sets a sysctl of the namespace (`key` as in /proc/sys, dotted).
    pub fn sysctl(&self, key: &str, value: &str) -> io::Result<()> {
        let path = format!("/proc/sys/{}", key.replace('.', "/"));
        self.within(|| std::fs::write(&path, value).map_err(|e| io::Error::new(e.kind(), format!("sysctl {key} = {value}: {e}"))))
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.name], None);
    }
}

/// Names of undertow's namespaces now present, live owners' or not.
pub fn list() -> Vec<String> {
    let mut names: Vec<String> = match std::fs::read_dir(NETNS_DIR) {
        Ok(d) => d.filter_map(|e| e.ok()?.file_name().into_string().ok()).filter(|n| n.starts_with(PREFIX)).collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

/// Removes the namespaces of runs whose process is gone (killed before it
/// could clean up); returns their names. Deleting a namespace removes its
/// devices, addresses and routes with it.
pub fn clean_orphans() -> io::Result<Vec<String>> {
    let mut removed = Vec::new();
    for name in list().into_iter().filter(|n| orphaned(n)) {
        ip(&["netns", "del", &name], None)?;
        removed.push(name);
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_tag_names_this_process_as_its_live_owner() {
        let tag = run_tag();
        let name = format!("{tag}-l");
        assert_eq!(owner(&name).map(|o| o.0), Some(std::process::id()));
        assert!(!orphaned(&name));
    }

    #[test]
    fn a_name_whose_owner_started_at_another_time_is_orphaned() {
        let pid = std::process::id();
        let start = start_time(pid).unwrap();
        assert!(orphaned(&format!("{PREFIX}{pid}.{}-0-l", start + 1)));
    }

    #[test]
    fn names_not_of_undertows_form_are_never_orphans() {
        assert!(!orphaned("ut-something"));
        assert!(!orphaned("other-1.2-0-l"));
    }
}
