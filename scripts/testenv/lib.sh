# shellcheck shell=bash
# shellcheck disable=SC2034 # the variables here are for the scripts that source this file
# lib.sh: what the scripts beside it share. Sourced, not run.
#
# Every script here builds one real server (or a set of them) once into the cache folder and starts and
# stops it in the background on this machine, by pid files under $RUN_DIR. A script's `start` prints
# `export NAME=value` lines on standard output (the variables the tests read) and its log on standard
# error, so that `eval "$(scripts/testenv/NAME.sh start)"` sets up a shell for the tests.

TOOLS_DIR="${MCP_EXECUTOR_TOOLS_DIR:-$HOME/.cache/mcp-executor-tools}"
RUN_DIR="$TOOLS_DIR/run"
GO="${GO:-go}"
TESTENV_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$TESTENV_DIR/../.." && pwd)"
: "${TESTENV_NAME:=testenv}"

say() { printf '%s: [%s] %s\n' "$TESTENV_NAME" "$(date +%H:%M:%S)" "$*" >&2; }
die() { say "$*"; exit 1; }

# go_build_env CMD...: run CMD with the Go settings a third-party build here needs: no workspace, the
# module's own go.mod read as it is (-mod=mod fills go.sum where a copied tree lacks entries), no VCS
# stamping (a copied tree is no checkout).
go_build_env() { GOWORK=off GOFLAGS="-mod=mod -buildvcs=false" "$@"; }

# module_dir MODULE@VERSION: the folder the Go module cache holds the module's source in (downloaded
# from the module proxy when missing). Read-only: copy it before changing anything.
module_dir() {
	local dir
	command -v "$GO" >/dev/null || die "go is not on PATH: Go 1.26 is needed to build the test servers"
	mkdir -p "$TOOLS_DIR"
	dir=$(cd "$TOOLS_DIR" && go_build_env "$GO" mod download -json "$1" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
	if [ -z "$dir" ] || [ ! -d "$dir" ]; then die "go mod download $1 failed"; fi
	printf '%s\n' "$dir"
}

# copy_module MODULE@VERSION DEST: a writable copy of the module's source at DEST (emptied first).
copy_module() {
	local src
	src=$(module_dir "$1")
	rm -rf "$2"
	mkdir -p "$(dirname "$2")"
	cp -R "$src" "$2"
	chmod -R u+w "$2"
}

# timed DESC CMD...: run CMD and say how long it took (the build times the contributors' page quotes).
timed() {
	local desc=$1 t0=$SECONDS
	shift
	"$@" || return
	say "$desc took $((SECONDS - t0)) s"
}

# alive PIDFILE: the process the file names runs.
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# daemon PIDFILE LOG [--dir DIR] CMD...: start CMD in the background, detached from this shell's
# standard streams, its output in LOG and its pid in PIDFILE. nohup execs the command, so the pid is the
# server's own.
daemon() {
	local pidfile=$1 log=$2 dir=.
	shift 2
	if [ "${1:-}" = --dir ]; then dir=$2; shift 2; fi
	(
		cd "$dir" || exit 1
		nohup "$@" >"$log" 2>&1 </dev/null &
		echo $! >"$pidfile"
	)
}

# stop_pid PIDFILE: SIGTERM the process, SIGKILL it after 15 s, remove the file.
stop_pid() {
	local f=$1 pid i
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		for ((i = 0; i < 75; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
		kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
	fi
	rm -f "$f"
}

# wait_until WHAT PIDFILE LOG TIMEOUT CHECK...: poll CHECK until it succeeds. Fails, showing the end of
# LOG, when the process of PIDFILE ends first (PIDFILE "" for none) or after TIMEOUT seconds.
wait_until() {
	local what=$1 pidfile=$2 log=$3 timeout=$4 deadline
	shift 4
	deadline=$((SECONDS + timeout))
	until "$@"; do
		if [ -n "$pidfile" ] && ! alive "$pidfile"; then
			say "$what ended before it was ready; the end of $log:"
			tail -n 20 "$log" >&2 || true
			return 1
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			say "$what was not ready after ${timeout} s; see $log"
			return 1
		fi
		sleep 0.3
	done
}

# ports_free PORT...: fail naming the first port something on this machine listens on.
ports_free() {
	local p
	for p in "$@"; do
		if ss -Hltn "sport = :$p" 2>/dev/null | grep -q .; then
			die "port $p is in use (a server of another run? stop it first, or set this script's port variable)"
		fi
	done
}

# usage TEXT: print the script's usage and exit 2.
usage() { printf 'usage: %s\n' "$1" >&2; exit 2; }

# locked NAME CMD...: run CMD holding the lock $TOOLS_DIR/.NAME.lock, so that two runs on one machine
# do not build the same thing into the same folder at once (the second finds it built).
locked() {
	local name=$1 fd
	shift
	mkdir -p "$TOOLS_DIR"
	exec {fd}>"$TOOLS_DIR/.$name.lock"
	flock "$fd"
	"$@"
	local rc=$?
	exec {fd}>&-
	return "$rc"
}
