#!/bin/sh
# One replica of a job the local executor runs. Started detached (its own process group, so it outlives
# a kill -9 of the service), it records its pid, runs the job's command with output appended to the
# log, forwards SIGTERM to the command's main process (as the kubelet sends it to a container's), and
# records how it ended once nothing of the command's process group runs. POSIX sh, so a replica costs
# about a megabyte more than its command (a Node supervisor cost 44 MB each).
#
#   sh replica-supervisor.sh <dir> <rank> <node> <grace seconds> <working dir> -- <command> [args...]
#     <dir>/<rank>.pid   {"pid","node","startedAt"}  (the executor writes it too, right after spawn)
#     <dir>/<rank>.exit  {"code","signal","reason","stopped","at","command"}  once the command has ended; stopped:
#                        this supervisor got a SIGTERM first, or the command exited 0 after saying in
#                        <dir>/<rank>.sigterm that one reached it (so an exit 0 is a stop, not the job finished);
#                        command: true when the code is the command's own (absent: this script's)
#     <dir>/<rank>.log   the command's stdout and stderr
#     <dir>/<rank>.group the command's process group (where setsid exists), for the executor's SIGKILL
#     <dir>/<rank>.orphans  empty, once this supervisor has sent the group's orphans their SIGTERM
#     <dir>/<rank>.termed   empty, once it has passed a stop's SIGTERM to the command's main process
#     <dir>/<rank>.abandoned  (boa's) a lost start given up on: this supervisor ends, running nothing
if [ "$#" -lt 7 ] || [ "$6" != "--" ]; then
  echo 'usage: replica-supervisor.sh <dir> <rank> <node> <grace seconds> <working dir> -- <command> [args...]' >&2
  exit 2
fi
dir=$1
rank=$2
node=$3
grace=$4
workdir=$5
shift 6

# The job's PATH finds its command; this script's own tools (date, mv, sed, sleep, setsid, tr) come from the
# system's folders first, so a job whose PATH is only, say, its virtualenv's bin still gets its exit
# recorded (without the record, its end would read as a kill from outside).
job_path=${PATH-/usr/local/bin:/usr/bin:/bin}
PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin${PATH:+:$PATH}
export PATH

# A SIGTERM that comes before the command exists (a generation replaced at once) is remembered, so the
# command is not started and the stop is still recorded, instead of this shell dying with no record.
stopped=0
trap 'stopped=1' TERM
# A terminal closing must not stop a job that outlives its service.
trap '' HUP

# Whoever is first (this or the executor) writes the record; a crash in between loses nothing. A link
# fails if the record is there already: no second writer replaces the first. The executor removes an
# earlier start's record before it launches (replica-start.ts), so one found here names this shell, or
# another supervisor started for this replica: one whose start boa took for lost and, this shell held up
# past the wait for its record, launched again. That one runs the replica; this one ends at once,
# having run nothing (two copies of a replica ran).
# A lost start boa gave up on or no longer wants (<rank>.abandoned, lost-start-strays.ts): nothing tracks
# it, so it runs nothing. Looked at again once its record is in: boa reads records after marking.
abandoned() {
  [ -e "$dir/$rank.abandoned" ] || return 1
  echo "boa: this start was given up on (its answer lost, the replica failed or no longer wanted): pid $$ ends, running nothing" >>"$dir/$rank.log"
}
abandoned && exit 0
if [ ! -e "$dir/$rank.pid" ]; then
  printf '{"pid":%d,"node":"%s","startedAt":%s000}' "$$" "$node" "$(date +%s)" >"$dir/$rank.pid.$$.tmp" &&
    ln "$dir/$rank.pid.$$.tmp" "$dir/$rank.pid" 2>/dev/null
  rm -f "$dir/$rank.pid.$$.tmp"
fi
owner=$(cat "$dir/$rank.pid" 2>/dev/null)
owner=${owner#'{"pid":'}
owner=${owner%%[!0-9]*}
if [ -n "$owner" ] && [ "$owner" != "$$" ]; then
  echo "boa: replica already run by supervisor $owner: this start (pid $$) ends, running nothing" >>"$dir/$rank.log"
  exit 0
fi
if abandoned; then
  [ "$owner" = "$$" ] && rm -f "$dir/$rank.pid"
  exit 0
fi

record_exit() {
  # Control characters (a newline in a working directory's name) would make the record invalid JSON, and
  # a job with no readable exit record is resumed as if stopped from outside: they are dropped.
  reason=$(printf '%s' "$2" | tr -d '\000-\037' | sed 's/\\/\\\\/g; s/"/\\"/g')
  if [ "$stopped" = 1 ]; then by_term=true; else by_term=false; fi
  # Its folder removed while it ran (logs cleaned up by hand): made again, or the end reads as a kill;
  # owner-only, as boa makes it (replica-start.ts).
  (umask 077 && mkdir -p "$dir")
  # Renamed only once written whole: on a full disk printf fails after truncating its file, and an empty
  # record was renamed in. None is better: the end then reads as an interruption and the job resumes.
  # $3 = command: the code is the command's own exit status, not this script's (an exit 127 or 126 of
  # it is not retried: src/cloud/command-exits.ts).
  if [ "$3" = command ]; then own=',"command":true'; else own=; fi
  if printf '{"code":%d,"signal":null,"reason":"%s","stopped":%s,"at":%s000%s}' "$1" "$reason" "$by_term" \
    "$(date +%s)" "$own" >"$dir/$rank.exit.tmp"; then
    mv "$dir/$rank.exit.tmp" "$dir/$rank.exit" && return
  fi
  rm -f "$dir/$rank.exit.tmp"
}

stop_before_start() {
  echo 'boa: stopped (SIGTERM) before the command started' >>"$dir/$rank.log"
  record_exit 143 'stopped before the command started'
  exit 143
}
[ "$stopped" = 1 ] && stop_before_start
# Started in / (an absolute <dir>), this enters the command's working directory itself: one removed since
# the job was submitted is then an exit like any other, counted with its backoff, not a spawn that fails
# at every reconcile with nothing recorded.
if ! cd "$workdir" 2>>"$dir/$rank.log"; then
  echo "boa: cannot enter the working directory $workdir" >>"$dir/$rank.log"
  record_exit 126 "cannot enter the working directory $workdir"
  exit 126
fi
# boa's own command looked up as the exec below will (execvp: a name with a slash from the working
# directory, else the first executable file of that name on the job's PATH, an empty entry meaning here).
# Only this says whether the exec itself would fail: an exit 127 or 126 afterwards may be the command's
# own (`sh -c 'exec torchrun ...'` on a machine without torchrun, a sys.exit(127)), so it names no
# program, and fails the job without a restart (recorded as the command's). Checked at submission too
# (executor-command.ts), so this is a PATH changed or a file gone since: an exit counted with its backoff
# and retried like a removed working directory (docs/jobs.md), since the file may come back (a
# virtualenv being rebuilt).
# Sets `found` to found, not-executable (only files it may not run) or missing; no subshell, so a SIGTERM
# meanwhile still reaches the trap above.
lookup() {
  case $1 in
    */*)
      if [ -f "$1" ] && [ -x "$1" ]; then found=found; elif [ -e "$1" ]; then found=not-executable; else found=missing; fi
      return
      ;;
  esac
  found=missing
  rest=$job_path
  while :; do
    entry=${rest%%:*}
    if [ -f "${entry:-.}/$1" ] && [ -x "${entry:-.}/$1" ]; then
      found=found
      return
    fi
    [ -e "${entry:-.}/$1" ] && found=not-executable
    [ "$rest" = "$entry" ] && break
    rest=${rest#*:}
  done
}
lookup "$1"
case $found in
  missing)
    echo "boa: command not found: no $1 on the job's PATH ($job_path) from $workdir" >>"$dir/$rank.log"
    record_exit 127 "command not found: $1"
    exit 127
    ;;
  not-executable)
    echo "boa: command not executable: $1 is not an executable file (the job's PATH: $job_path; from $workdir)" >>"$dir/$rank.log"
    record_exit 126 "command not executable: $1"
    exit 126
    ;;
esac
# Defined before the command starts: the instant between its start and the trap below is kept short.
# A stop reaches the command's main process only, as on Kubernetes: it ends what it started itself. Sent
# to the whole group, PyTorch's DataLoader workers (forked into it) died of a SIGTERM their parent had
# not sent, and the training loop raised on it before it could checkpoint. What the main process leaves
# in its group when it ends gets the SIGTERM then (term_orphans).
# Seconds on a steady clock where Linux has one (the wall clock can step: a laptop waking, NTP), so a
# stepped clock neither cuts a stopping command's grace short nor holds it off.
steady_seconds() {
  if [ -r /proc/uptime ] && read -r up idle </proc/uptime; then echo "${up%%.*}"; else date +%s; fi
}
# Once the main process has ended during a stop, the processes of its group whose parent is none of them
# (what a shell that did not exec its command leaves: dash runs `sh -c 'python train.py'` as a child)
# have nobody to pass the SIGTERM on, and get it, once; their own children do not (DataLoader workers).
# Without /proc the whole group gets it.
# A marker file, written with `true`: a redirection that fails on the special builtin `:` ends the shell
# (POSIX), and a folder removed from outside then cost the replica its exit record and its group's kill.
# Its folder removed, it is made again (as for the exit record): without the marker, boa took a
# supervisor lost after it had passed the SIGTERM on for one lost before, and sent the command a second.
mark() {
  true 2>/dev/null >"$dir/$rank.$1" && return
  (umask 077 && mkdir -p "$dir") 2>/dev/null && true 2>/dev/null >"$dir/$rank.$1"
}
orphans_said() {
  mark orphans
}
term_orphans() {
  [ -n "$group" ] && [ -z "$orphans_termed" ] || return 0
  orphans_termed=1
  # Said (orphans_said) just before it is sent: boa sends it itself if this supervisor is lost before
  # it has (replica-stop.ts), and must not send it twice; killed between the two, none is sent.
  if [ ! -d /proc/self ]; then
    orphans_said
    kill -TERM -"$group" 2>/dev/null
    return
  fi
  members=' '
  parents=
  for stat in /proc/[0-9]*/stat; do
    read -r line 2>/dev/null <"$stat" || continue
    # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
    set -- ${line##*) }
    [ "$3" = "$group" ] && [ "$1" != Z ] || continue
    members="$members${line%% *} "
    parents="$parents ${line%% *}:$2"
  done
  orphans_said
  for member in $parents; do
    case $members in
      *" ${member#*:} "*) ;;
      *) kill -TERM "${member%%:*}" 2>/dev/null ;;
    esac
  done
}
forward_term() {
  stopped=1
  [ -z "$stopped_at" ] && stopped_at=$(steady_seconds)
  # Until main_ended is set (as soon as it is reaped), $child's pid is still its own (a zombie's, at worst).
  if [ -z "$main_ended" ]; then
    # Once: a second SIGTERM to this supervisor (a restart of boa that finds it unrecorded, or that was
    # killed between sending a stop and recording it sent, sends one again) must not reach the command,
    # whose handler's save it would cut short, as on Kubernetes, where the kubelet sends one.
    [ -z "$main_termed" ] || return 0
    main_termed=1
    # Said just before it is sent, as orphans_said: boa sends it itself if this supervisor is lost
    # before it has (replica-stop.ts).
    mark termed
    kill -TERM "$child" 2>/dev/null
  else
    term_orphans
  fi
}
stopped_at=
main_ended=
main_termed=
orphans_termed=
# A job that answers a SIGTERM by exiting 0 (boa's clients checkpoint, then exit) cannot be told from
# one that finished, unless it says so: the clients write their pid to this file when a SIGTERM reaches
# them. One that reached the command alone (`pkill python`, a kill of its group), not this supervisor,
# is then a stop from outside, not the job's end. Only the command's own process counts (setsid and env
# exec it, so it has $child's pid), and only with exit 0: a torchrun agent ending its workers with
# SIGTERM after one crashed, then exiting 1, is a failure, not a free resume.
sigterm_file="$dir/$rank.sigterm"
rm -f "$sigterm_file" "$dir/$rank.orphans" "$dir/$rank.termed"
export BOA_SIGTERM_FILE="$sigterm_file"
setsid_bin=$(command -v setsid 2>/dev/null)
# The command starts with HUP, INT and QUIT at their defaults: this shell ignores HUP (above), and a
# background command of a shell without job control starts with INT and QUIT ignored, which an exec
# keeps (a Python job then never sees a KeyboardInterrupt). GNU env resets them; without it (macOS)
# they stay ignored.
env_bin=$(command -v env 2>/dev/null)
reset_signals=--default-signal=HUP,INT,QUIT
"$env_bin" "$reset_signals" true 2>/dev/null || reset_signals=
[ "$stopped" = 1 ] && stop_before_start
# The command is forked with SIGTERM at its default: a child forked while the shell catches it can swallow
# one that comes before its exec (dash keeps it pending and exec drops it), and the command then never
# stops. In the few microseconds until the trap below is set, a SIGTERM ends this shell with no exit
# record instead; the executor then passes it on to the command itself (no <rank>.termed: replica-stop.ts).
trap - TERM
if [ -n "$setsid_bin" ]; then
  # The command in a session (and process group) of its own, its id recorded in <rank>.group by the
  # command's own process before it execs, so no crash in between leaves a group nobody knows: a job
  # that signals its own group (`trap 'kill 0' EXIT`, a common cleanup) must not reach this supervisor,
  # which would take it for a stop from outside. Without setsid (macOS) it shares this group. setsid is
  # named by its path, and looks the command up on the job's PATH.
  sh -c 'printf %s "$$" >"$1.tmp" && mv "$1.tmp" "$1"; PATH=$2; bin=$3; env_bin=$4; reset=$5; shift 5
    if [ -n "$reset" ]; then exec "$env_bin" "$reset" "$bin" "$@"; fi; exec "$bin" "$@"' \
    sh "$dir/$rank.group" "$job_path" "$setsid_bin" "$env_bin" "$reset_signals" "$@" >>"$dir/$rank.log" 2>&1 </dev/null &
  child=$!
  group=$child
else
  env ${reset_signals:+"$reset_signals"} PATH="$job_path" "$@" >>"$dir/$rank.log" 2>&1 </dev/null &
  child=$!
  group=
fi
trap forward_term TERM
# One that came while the command was being started is passed on now.
[ "$stopped" = 1 ] && forward_term

# wait returns early (above 128) when a trapped signal arrives; wait again until the command is reaped.
while :; do
  wait "$child"
  code=$?
  kill -0 "$child" 2>/dev/null || break
done
main_ended=1

# Whether a process of the command's group still runs. One that is only a zombie (left to an init that
# reaps late, or never, as in some containers) does not: waiting for it would make every stop last its
# full grace period.
group_lives() {
  kill -0 -"$group" 2>/dev/null || return 1
  [ -d /proc/self ] || return 0
  for stat in /proc/[0-9]*/stat; do
    read -r line 2>/dev/null <"$stat" || continue
    # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
    set -- ${line##*) }
    [ "$3" = "$group" ] && [ "$1" != Z ] && return 0
  done
  return 1
}
# Nothing of the replica may outlive it (helpers, workers, holding GPUs). Stopped: the rest of the group
# has until the grace period ends, its orphans told by a SIGTERM; ended on its own: it is killed now.
# The group's id cannot be reused while a member lives, so this reaches nothing else.
if [ -n "$group" ]; then
  if [ "$stopped" = 1 ]; then
    group_lives && term_orphans
    while group_lives && [ "$(steady_seconds)" -lt $((stopped_at + grace)) ]; do
      sleep 1
    done
  fi
  kill -KILL -"$group" 2>/dev/null
fi

if [ "$stopped" = 0 ] && [ "$code" = 0 ] && [ -e "$sigterm_file" ]; then
  marked=
  read -r marked <"$sigterm_file" 2>/dev/null
  [ "$marked" = "$child" ] && stopped=1
fi

# boa's own command was found above, so a 126 or 127 is its doing (or its child's, under a shell): what
# it could not run, only its output says.
case $code in
  126) reason='exited 126 (a command not executable? the job'"'"'s output says which)' ;;
  127) reason='exited 127 (command not found? the job'"'"'s output says which)' ;;
  0) reason='exited 0' ;;
  *) reason="exited $code" ;;
esac
record_exit "$code" "$reason" command
