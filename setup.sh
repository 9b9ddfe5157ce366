#!/bin/bash
# setup.sh - from a fresh Debian machine to a built sufs, a demo, or a test run.
#
#   ./setup.sh demo     install, bootstrap, configure, build, then show sufs
#                       at work on an image file it makes (build/demo.img)
#   ./setup.sh check    the same set-up, then the whole test suite (make check)
#   ./setup.sh build    the set-up and build only
#
#   --sanitizers        configure with --enable-sanitizers (ASan + UBSan) and
#                       build in build-san/ instead of build/
#
# Each step is skipped when it has nothing to do: packages already installed,
# configure newer than its inputs, build dir already configured.  The build
# is a VPATH build: the source tree is never written to except by autoreconf.
set -euo pipefail

SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# sufs-fuse and its tests: libfuse3-dev and fuse3 (fusermount3, mount.fuse3),
# psmisc (fuser), perl (prove runs pjdfstest), postmark (the crash workload);
# fuse2fs and postmark for bench/fuse too.
PACKAGES="autoconf automake libtool pkg-config make gcc libblkid-dev libreadline-dev
zlib1g-dev libcmocka-dev bats bats-assert bats-support e2fsprogs python3 tmux graphviz expect
universal-ctags binutils
jq libfuse3-dev fuse3 psmisc perl fuse2fs postmark attr acl"
JOBS=$(nproc 2>/dev/null || echo 2)

usage() {
	cat <<EOF
usage: ./setup.sh [--sanitizers] demo|check|build

  demo    install missing Debian packages, bootstrap, configure, build, and
          run a short demonstration on an image file (build/demo.img)
  check   the same set-up, then the whole test suite (make check)
  build   the set-up and build only

  --sanitizers  build with AddressSanitizer and UBSan, in build-san/
EOF
}

say() { printf '\n==> %s\n' "$*"; }
die() { printf 'setup.sh: %s\n' "$*" >&2; exit 1; }

# ---- 1. Debian packages ----------------------------------------------------

install_packages() {
	local missing=() p
	if ! command -v dpkg-query >/dev/null; then
		echo "setup.sh: not a Debian system; make sure these are installed: $PACKAGES" >&2
		return 0
	fi
	for p in $PACKAGES; do
		if [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)" != "ii " ]; then
			missing+=("$p")
		fi
	done
	[ ${#missing[@]} -eq 0 ] && return 0

	local sudo=
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null ||
			die "missing packages (${missing[*]}) and not root: install them as root"
		sudo=sudo
	fi
	# wait for another apt or dpkg (unattended upgrades) rather than fail
	local apt="$sudo env DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=300"
	say "installing ${missing[*]}"
	# an unreachable extra source fails the update but not what we need
	$apt update || echo "setup.sh: apt-get update reported errors; trying the install anyway" >&2
	$apt install -y --no-install-recommends "${missing[@]}"
}

# ---- 2. bootstrap: configure from configure.ac and the Makefile fragments -----

bootstrap() {
	local configure=$SRCDIR/configure
	if [ -x "$configure" ] && [ -f "$SRCDIR/Makefile.in" ] &&
	   [ -z "$(find "$SRCDIR" \( -path "$SRCDIR/build*" -o -path "$SRCDIR/.git" \) -prune -o \
		\( -name configure.ac -o -name Makefile.am -o -name Makefile.inc \) \
		-newer "$configure" -print)" ]; then
		return 0
	fi
	say "autoreconf -fi"
	(cd "$SRCDIR" && autoreconf -fi)
}

# ---- 3. configure, 4. build --------------------------------------------------

configure() {
	if [ -f "$SRCDIR/config.status" ]; then
		die "$SRCDIR is configured in tree; run 'make distclean' there first (setup.sh builds in $BUILDDIR)"
	fi
	mkdir -p "$BUILDDIR"
	if [ -f "$BUILDDIR/Makefile" ] && [ "$BUILDDIR/config.status" -nt "$SRCDIR/configure" ]; then
		return 0
	fi
	say "configure ${CONFIGURE_FLAGS[*]:-} (in ${BUILDDIR#"$SRCDIR"/}/)"
	(cd "$BUILDDIR" && "$SRCDIR/configure" -q ${CONFIGURE_FLAGS[@]+"${CONFIGURE_FLAGS[@]}"})
}

build() {
	say "make -j$JOBS"
	make -C "$BUILDDIR" -s -j"$JOBS"
}

setup() {
	install_packages
	bootstrap
	configure
	build
}

# ---- demo ------------------------------------------------------------------

# A small tree to copy into the image: the shared deterministic generator
# when it is beside the repository, and always a few text files of our own
# (so there is something readable to cat).
make_demo_tree() {
	local tree=$1 mktree=$SRCDIR/../shared/tools/mktree
	rm -rf "$tree"
	mkdir -p "$tree/docs"
	if [ -f "$mktree" ] && command -v python3 >/dev/null; then
		python3 "$mktree" "$tree/generated" --files 60 --seed 7 --max-size 200000 >/dev/null
	fi
	cat >"$tree/hello.txt" <<'EOF'
Hello from sufs.

This file was copied into the image by mkfs.sufs -d and read back out of it
by sufs-debug, through libsufs alone.
EOF
	seq 1 20000 >"$tree/docs/numbers.txt" # about 108 KiB: needs an indirect block at 4K
	cp "$SRCDIR/configure.ac" "$tree/docs/"
	ln -s ../hello.txt "$tree/docs/hello-link"
	ln "$tree/hello.txt" "$tree/docs/hello-hardlink"
	mkdir -p "$tree/empty-dir"
}

# Show a command, then run it (in the build dir, with paths relative to it).
run() {
	local a shown=
	for a in "$@"; do
		case $a in
		*[[:space:]]*) shown+=" \"$a\"" ;;
		*) shown+=" $a" ;;
		esac
	done
	printf '\n$%s\n' "$shown"
	"$@"
}

demo() {
	say "demo: an image file with a small tree in it"
	make_demo_tree "$BUILDDIR/demo-tree"
	rm -f "$BUILDDIR/demo.img"
	cd "$BUILDDIR"
	run mkfs/mkfs.sufs -L demo -d demo-tree demo.img 32M
	run dump/sufs-dump -h demo.img
	run debug/sufs-debug -R "ls -l /" demo.img
	run debug/sufs-debug -R "ls -l /docs" demo.img
	run debug/sufs-debug -R "cat /hello.txt" demo.img
	run debug/sufs-debug -R "stat /docs/numbers.txt" demo.img
	say "the image is $BUILDDIR/demo.img; look around with: $BUILDDIR/debug/sufs-debug $BUILDDIR/demo.img"
}

# ---- check -------------------------------------------------------------------

show_failures() {
	local trs log
	while IFS= read -r trs; do
		grep -Eq '^:test-result: (FAIL|ERROR|XPASS)' "$trs" || continue
		log=${trs%.trs}.log
		printf '\n---- %s (last 40 lines) ----\n' "${log#"$BUILDDIR"/}"
		tail -n 40 "$log" || true
	done < <(find "$BUILDDIR/tests" -name '*.trs' 2>/dev/null | sort)
}

check() {
	say "make check"
	local rc=0
	make -C "$BUILDDIR" -j"$JOBS" check || rc=$?
	if [ $rc -ne 0 ]; then
		show_failures
		printf '\nsetup.sh: make check failed (exit %d)' $rc >&2
		if [ -f "$BUILDDIR/test-suite.log" ]; then
			printf '; summary in %s' "$BUILDDIR/test-suite.log" >&2
		fi
		printf '\n' >&2
	fi
	return $rc
}

# ---- main -------------------------------------------------------------------

CMD=
CONFIGURE_FLAGS=()
BUILDDIR=$SRCDIR/build
for arg in "$@"; do
	case $arg in
	--sanitizers) CONFIGURE_FLAGS+=(--enable-sanitizers); BUILDDIR=$SRCDIR/build-san ;;
	-h|--help) usage; exit 0 ;;
	demo|check|build)
		[ -z "$CMD" ] || { usage >&2; exit 2; }
		CMD=$arg ;;
	*) usage >&2; exit 2 ;;
	esac
done
[ -n "$CMD" ] || { usage >&2; exit 2; }

setup
case $CMD in
build) say "built in $BUILDDIR" ;;
demo) demo ;;
check) check ;;
esac
