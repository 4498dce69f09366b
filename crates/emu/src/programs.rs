//! Unmodified programs as foreground: each `command` app's server and
//! client run in their hosts' namespaces, started and stopped at their
//! times, their output kept in the run directory (apps/<name>/).

use crate::sys;
use scenario::Command;
use std::fs::File;
use std::io;
use std::net::IpAddr;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use units::Time;

/// How long a program has to exit after SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(2);
/// The longest the supervisor sleeps without checking whether to stop.
const POLL: Duration = Duration::from_millis(20);

/// One program to run.
#[derive(Clone, Debug)]
pub struct Program {
    /// `<app>/server` or `<app>/client`.
    pub label: String,
    pub namespace: String,
    /// The command line, its placeholders filled.
    pub line: String,
    pub start: Time,
    pub stop: Time,
}

/// How a program ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// It exited by itself with this code, or was killed by this signal.
    Exited(i32),
    Signalled(i32),
    /// Undertow stopped it at its stop time (or the end of the run).
    Stopped,
    /// It never started (the run ended first), or could not be started.
    NotStarted(String),
}

/// Fills `{server}`, `{client}` and `{dir}` in a command line.
pub fn fill(line: &str, server: IpAddr, client: IpAddr, dir: &Path) -> String {
    line.replace("{server}", &server.to_string()).replace("{client}", &client.to_string()).replace("{dir}", &dir.display().to_string())
}

/// The programs of `commands`: the server at time zero, the client at the
/// app's start; both stop at its stop.
pub fn programs(commands: &[Command], addr: impl Fn(u32) -> IpAddr, namespace: impl Fn(u32) -> String, dir: &Path) -> Vec<Program> {
    let mut out = Vec::new();
    for c in commands {
        let (s, cl) = (addr(c.server), addr(c.client));
        if let Some(line) = &c.server_command {
            let line = fill(line, s, cl, dir);
            out.push(Program { label: format!("{}/server", c.name), namespace: namespace(c.server), line, start: Time::ZERO, stop: c.stop });
        }
        let line = fill(&c.client_command, s, cl, dir);
        out.push(Program { label: format!("{}/client", c.name), namespace: namespace(c.client), line, start: c.start, stop: c.stop });
    }
    out
}

fn spawn(p: &Program, dir: &Path) -> io::Result<Child> {
    let base: PathBuf = dir.join("apps").join(&p.label);
    std::fs::create_dir_all(base.parent().expect("a label has a directory"))?;
    let out = File::create(base.with_extension("out"))?;
    let err = File::create(base.with_extension("err"))?;
    std::process::Command::new("ip")
        .args(["netns", "exec", &p.namespace, "sh", "-c", &p.line])
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        // Its own process group: stopping it stops what it started.
        .process_group(0)
        .spawn()
}

fn ended(status: std::process::ExitStatus) -> Ended {
    match (status.code(), status.signal()) {
        (Some(c), _) => Ended::Exited(c),
        (None, Some(s)) => Ended::Signalled(s),
        (None, None) => Ended::Exited(-1),
    }
}

/// Stops a program's whole group: SIGTERM, then SIGKILL after the grace.
fn stop(child: &mut Child) {
    let _ = sys::signal_group(child.id(), sys::SIGTERM);
    let until = std::time::Instant::now() + GRACE;
    while std::time::Instant::now() < until {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(POLL);
    }
    // Whatever of the group is left, the leader included.
    let _ = sys::signal_group(child.id(), sys::SIGKILL);
    let _ = child.wait();
}

/// Runs `programs` on the clock `now` until each has ended or `done` is
/// set; writes their output under `dir`. How each ended, in order.
pub fn supervise(programs: &[Program], dir: &Path, now: impl Fn() -> Time, done: &AtomicBool) -> Vec<Ended> {
    let mut children: Vec<Option<Child>> = programs.iter().map(|_| None).collect();
    let mut ends: Vec<Option<Ended>> = programs.iter().map(|_| None).collect();
    loop {
        let t = now();
        let finishing = done.load(Ordering::Relaxed);
        for (i, p) in programs.iter().enumerate() {
            if ends[i].is_some() {
                continue;
            }
            match &mut children[i] {
                None if finishing => ends[i] = Some(Ended::NotStarted("the run ended first".into())),
                None if t >= p.start => match spawn(p, dir) {
                    Ok(c) => children[i] = Some(c),
                    Err(e) => ends[i] = Some(Ended::NotStarted(format!("cannot start {:?}: {e}", p.line))),
                },
                None => {}
                Some(c) => {
                    if let Ok(Some(status)) = c.try_wait() {
                        ends[i] = Some(ended(status));
                    } else if finishing || t >= p.stop {
                        stop(c);
                        ends[i] = Some(Ended::Stopped);
                    }
                }
            }
        }
        if ends.iter().all(Option::is_some) {
            return ends.into_iter().map(|e| e.expect("all ended")).collect();
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_the_hosts_addresses_and_the_run_directory() {
        let line = fill("curl http://{server}/x --interface {client} -o {dir}/x", [198, 19, 0, 1].into(), [198, 18, 0, 1].into(), Path::new("/r"));
        assert_eq!(line, "curl http://198.19.0.1/x --interface 198.18.0.1 -o /r/x");
    }
}
