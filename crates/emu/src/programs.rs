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
    /// Run in the terminal (`undertow shell`): it keeps undertow's
    /// standard input and output, and the run ends when it exits.
    pub interactive: bool,
    /// SERVER and CLIENT in its environment: the hosts' addresses.
    pub server: IpAddr,
    pub client: IpAddr,
}

/// What `undertow shell` runs in place of a command app's client.
#[derive(Clone, Debug)]
pub struct Shell {
    /// The command app whose client host it runs on (none: the first).
    pub app: Option<String>,
    /// The command line (none: the user's shell).
    pub command: Option<String>,
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

/// Fills `{server}`, `{client}`, `{dir}` (the run directory) and `{here}`
/// (the scenario's directory) in a command line.
pub fn fill(line: &str, server: IpAddr, client: IpAddr, dir: &Path, here: &Path) -> String {
    line.replace("{server}", &server.to_string())
        .replace("{client}", &client.to_string())
        .replace("{dir}", &dir.display().to_string())
        .replace("{here}", &here.display().to_string())
}

/// The command app a shell runs in, or why there is none.
pub fn shell_app<'a>(commands: &'a [Command], shell: &Shell) -> Result<&'a Command, String> {
    match &shell.app {
        Some(name) => commands.iter().find(|c| &c.name == name).ok_or_else(|| {
            let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
            format!("no command app named {name:?}: the scenario has {}", if names.is_empty() { "none".into() } else { names.join(", ") })
        }),
        None => commands.first().ok_or_else(|| {
            "undertow shell runs in the client host of a command app, and the scenario has none: add one \
             ([[apps]] kind = \"command\", with a server_command, or client_command = \"true\" alone)"
                .to_string()
        }),
    }
}

/// The programs of `commands`: the server at time zero, the client at the
/// app's start; both stop at its stop. With `shell`, the chosen app's
/// client is the shell, started at once, and the run lasts until it exits.
pub fn programs(
    commands: &[Command],
    addr: impl Fn(u32) -> IpAddr,
    namespace: impl Fn(u32) -> String,
    dir: &Path,
    shell: Option<&Shell>,
) -> Vec<Program> {
    let mut out = Vec::new();
    let login = || std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into());
    for c in commands {
        let (s, cl) = (addr(c.server), addr(c.client));
        if let Some(line) = &c.server_command {
            let line = fill(line, s, cl, dir, &c.here);
            let label = format!("{}/server", c.name);
            out.push(Program {
                label,
                namespace: namespace(c.server),
                line,
                start: Time::ZERO,
                stop: c.stop,
                interactive: false,
                server: s,
                client: cl,
            });
        }
        let label = format!("{}/client", c.name);
        let chosen = shell.filter(|sh| shell_app(commands, sh).is_ok_and(|a| a.name == c.name));
        let program = match chosen {
            Some(sh) => {
                let line = sh.command.clone().unwrap_or_else(login);
                Program {
                    label,
                    namespace: namespace(c.client),
                    line,
                    start: Time::ZERO,
                    stop: Time(u64::MAX),
                    interactive: true,
                    server: s,
                    client: cl,
                }
            }
            None => {
                let line = fill(&c.client_command, s, cl, dir, &c.here);
                Program { label, namespace: namespace(c.client), line, start: c.start, stop: c.stop, interactive: false, server: s, client: cl }
            }
        };
        out.push(program);
    }
    out
}

fn spawn(p: &Program, dir: &Path) -> io::Result<Child> {
    let mut cmd = std::process::Command::new("ip");
    cmd.args(["netns", "exec", &p.namespace, "sh", "-c", &p.line]);
    cmd.env("SERVER", p.server.to_string()).env("CLIENT", p.client.to_string());
    if p.interactive {
        // The terminal's: its input, output and signals.
        return cmd.spawn();
    }
    let base: PathBuf = dir.join("apps").join(&p.label);
    std::fs::create_dir_all(base.parent().expect("a label has a directory"))?;
    let out = File::create(base.with_extension("out"))?;
    let err = File::create(base.with_extension("err"))?;
    cmd.stdin(Stdio::null())
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

/// Stops a program (its whole group, unless it is interactive): SIGTERM,
/// then SIGKILL after the grace.
fn stop(child: &mut Child, interactive: bool) {
    let id = child.id();
    let signal = |sig| if interactive { sys::signal_process(id, sig) } else { sys::signal_group(id, sig) };
    let _ = signal(sys::SIGTERM);
    let until = std::time::Instant::now() + GRACE;
    while std::time::Instant::now() < until {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(POLL);
    }
    // Whatever of the group is left, the leader included.
    let _ = signal(sys::SIGKILL);
    let _ = child.wait();
}

/// Runs `programs` on the clock `now` until each has ended or `done` is
/// set (which it sets itself when an interactive program ends); writes
/// their output under `dir`. How each ended, in order.
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
                        if p.interactive {
                            done.store(true, Ordering::Relaxed);
                        }
                    } else if finishing || t >= p.stop {
                        stop(c, p.interactive);
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
        let (s, c) = ([198, 19, 0, 1].into(), [198, 18, 0, 1].into());
        let line = fill("curl http://{server}/x --interface {client} -o {dir}/x -K {here}/k", s, c, Path::new("/r"), Path::new("/e"));
        assert_eq!(line, "curl http://198.19.0.1/x --interface 198.18.0.1 -o /r/x -K /e/k");
    }
}
