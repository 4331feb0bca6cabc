# A private PostgreSQL cluster for the tests: Debian's postgresql package
# (PostgreSQL 15), run as the postgres system user (PostgreSQL refuses to
# run as root), on 127.0.0.1 and a free port, in a temporary data directory,
# with durability off for speed. Sourced by common.sh when a test needs it,
# and by tests/lib/with-pg; needs the defer stack of common.sh or a defer()
# of the caller's own.
#
#   pg_up DIR          start the cluster in DIR (sets PG_PORT, PG_DIR)
#   pg_createdb NAME   create a database; prints postgresql://postgres@127.0.0.1:PORT/NAME
#   pg_socket_url NAME the same over the Unix socket in DIR/run (other netns)
#   pg_down DIR        stop it at once and remove DIR (pg_up defers this)

: "${PG_BIN:=/usr/lib/postgresql/15/bin}"
PG_PORT=
PG_DIR=

_pg_fail() { echo "pg: $*" >&2; return 1; }
# _pg_as_postgres CMD...: CMD as the postgres user, from a directory it can read.
_pg_as_postgres() { (cd / && runuser -u postgres -- "$@"); }
_pg_log_tail() {
	[ -f "$1" ] || return 0
	echo "pg: --- last lines of $1 ---" >&2
	tail -n 30 "$1" >&2
}

pg_up() {
	local dir=$1 p try log
	local b
	for b in initdb pg_ctl postgres pg_isready psql; do
		[ -x "$PG_BIN/$b" ] || _pg_fail "$PG_BIN/$b is missing: apt-get install postgresql (Debian's PostgreSQL 15)" || return 1
	done
	id -u postgres >/dev/null 2>&1 ||
		_pg_fail "no 'postgres' system user (it comes with Debian's package): apt-get install postgresql" || return 1
	command -v runuser >/dev/null || _pg_fail "runuser (util-linux) is missing" || return 1
	mkdir -p "$dir" || return 1
	# mktemp -d makes 0700 directories: the postgres user must reach DIR/pg.
	chmod 755 "$dir"
	install -d -o postgres -g postgres -m 700 "$dir/pg" || _pg_fail "cannot make $dir/pg owned by postgres" || return 1
	install -d -o postgres -g postgres -m 755 "$dir/run" || return 1
	log=$dir/run/server.log
	if ! _pg_as_postgres "$PG_BIN/initdb" -D "$dir/pg" --auth=trust -U postgres \
		-E UTF8 --no-locale --no-sync >"$dir/initdb.log" 2>&1; then
		tail -n 30 "$dir/initdb.log" >&2
		_pg_fail "initdb -D $dir/pg failed (as the postgres user)"
		return 1
	fi
	cat >>"$dir/pg/postgresql.conf" <<-EOF
	# benchfleet tests: loopback only, a private socket directory, no durability
	listen_addresses = '127.0.0.1'
	unix_socket_directories = '$dir/run'
	fsync = off
	synchronous_commit = off
	full_page_writes = off
	max_connections = 300
	log_min_messages = warning
	EOF
	# Pick a free port; another process may take it first, so retry.
	for try in 1 2 3 4 5 6 7 8; do
		p=$(shuf -i 20000-60000 -n 1)
		ss -Hltn "sport = :$p" 2>/dev/null | grep -q . && continue
		: | _pg_as_postgres tee "$log" >/dev/null
		if _pg_as_postgres "$PG_BIN/pg_ctl" -D "$dir/pg" -l "$log" -w -t 60 \
			-o "-p $p" start >"$dir/pg_ctl.log" 2>&1; then
			PG_PORT=$p
			break
		fi
		if grep -qE 'could not bind|Address already in use|could not create any TCP/IP sockets' "$log"; then
			_pg_as_postgres "$PG_BIN/pg_ctl" -D "$dir/pg" -m immediate stop >/dev/null 2>&1
			continue
		fi
		cat "$dir/pg_ctl.log" >&2
		_pg_log_tail "$log"
		_pg_as_postgres "$PG_BIN/pg_ctl" -D "$dir/pg" -m immediate stop >/dev/null 2>&1
		_pg_fail "PostgreSQL did not start in $dir/pg"
		return 1
	done
	if [ -z "$PG_PORT" ]; then
		_pg_log_tail "$log"
		_pg_fail "PostgreSQL found no free port in 8 tries"
		return 1
	fi
	PG_DIR=$dir
	if declare -F defer >/dev/null; then defer "pg_down '$dir'"; fi
	for try in $(seq 100); do
		"$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" && return 0
		sleep 0.1
	done
	_pg_log_tail "$log"
	_pg_fail "PostgreSQL on 127.0.0.1:$PG_PORT is not ready (pg_isready) after 10 s"
}

pg_down() {
	local dir=$1
	[ -d "$dir/pg" ] && _pg_as_postgres "$PG_BIN/pg_ctl" -D "$dir/pg" -m immediate stop >/dev/null 2>&1
	rm -rf "$dir"
}

# pg_createdb NAME: prints the database's URL (libpq connection URI).
pg_createdb() {
	local name=$1 out
	[ -n "$PG_PORT" ] || { _pg_fail "pg_createdb $name: no cluster (pg_up first)"; return 1; }
	if ! out=$("$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres \
		-d postgres -c "CREATE DATABASE \"$name\"" 2>&1); then
		echo "$out" >&2
		_pg_log_tail "$PG_DIR/run/server.log"
		_pg_fail "CREATE DATABASE $name failed on 127.0.0.1:$PG_PORT"
		return 1
	fi
	echo "postgresql://postgres@127.0.0.1:$PG_PORT/$name"
}

# pg_socket_url NAME: the URL of database NAME over the cluster's Unix
# socket, for a client in another network namespace (its own loopback).
pg_socket_url() {
	echo "postgresql://postgres@/$1?host=$PG_DIR/run&port=$PG_PORT"
}
