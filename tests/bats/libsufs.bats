#!/usr/bin/env bats
# The library as a library: installed with a prefix given at install time,
# its header, its pkg-config file and the example of libsufs(3).

load helper

bats_require_minimum_version 1.5.0

# One install for the file: `make install prefix=DIR` from the build
# directory, the make of the test run kept out of it (its flags, DESTDIR).
setup_file() {
	export INST=$BATS_FILE_TMPDIR/inst
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u DESTDIR \
		make -s -C "$SUFS_BUILDDIR" install prefix="$INST" >"$BATS_FILE_TMPDIR/install.log" 2>&1 ||
		{ cat "$BATS_FILE_TMPDIR/install.log" >&3; return 1; }
}

# pc ARGS...: pkg-config, the installed sufs.pc first
pc() {
	require_cmd pkg-config
	PKG_CONFIG_PATH=$INST/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} pkg-config "$@"
}

# build OUT SOURCE: compile against the installed header and library only
build() {
	local cc=${CC:-cc}
	require_cmd "$cc"
	# shellcheck disable=SC2046
	"$cc" -Wall -Wextra -Werror -o "$1" "$2" $(pc --cflags --libs sufs) \
		-Wl,-rpath,"$(pc --variable=libdir sufs)"
}

@test "make install prefix=DIR: the programs find the library there, and sufs.pc points there" {
	local p fuse=
	# sufs-fuse where configure found libfuse3
	[ ! -x "$FUSE" ] || fuse=sbin/sufs-fuse
	for p in bin/sufs-dump bin/sufs-debug bin/sufs-replay sbin/mkfs.sufs sbin/fsck.sufs \
		sbin/sufs-snap sbin/sufs-tune $fuse; do
		run env -u LD_LIBRARY_PATH "$INST/$p" --version
		assert_success
		assert_output --regexp "^${p#*/} \(sufs\) [0-9]"
	done
	env -u LD_LIBRARY_PATH "$INST/sbin/mkfs.sufs" -q "$T/img" 8M
	run env -u LD_LIBRARY_PATH "$INST/sbin/fsck.sufs" -fn "$T/img"
	assert_success
	run pc --variable=libdir sufs
	assert_output "$INST/lib"
	run pc --cflags sufs
	assert_output --regexp "^-I$INST/include( |$)"
	[ -f "$INST/share/man/man3/libsufs.3" ]
	[ -f "$INST/share/man/man8/sufs-tune.8" ]
}

@test "the installed header has the version macros and no test hooks" {
	[ -f "$INST/include/sufs/sufs_version.h" ]
	[ ! -e "$INST/include/sufs/sufs_test.h" ]
	run grep -c sufs_test_break_rule "$INST/include/sufs/sufs.h"
	assert_output 0
	cat >"$T/v.c" <<-'EOF2'
	#include <stdio.h>
	#include <string.h>
	#include <sufs/sufs.h>
	#if !SUFS_LIB_VERSION_AT_LEAST(0, 1, 0) || SUFS_LIB_VERSION_AT_LEAST(99, 0, 0)
	#error the version macros do not compare
	#endif
	int main(void)
	{
		printf("%s %d.%d.%d\n", SUFS_LIB_VERSION, SUFS_LIB_VERSION_MAJOR,
		       SUFS_LIB_VERSION_MINOR, SUFS_LIB_VERSION_PATCH);
		return strcmp(SUFS_LIB_VERSION, sufs_version()) != 0;
	}
	EOF2
	build "$T/v" "$T/v.c"
	run "$T/v"
	assert_success
	local v
	v=$("$MKFS" --version | sed 's/.* //')
	assert_output "$v $v"
}

@test "option structures grow: size 0 is the first release, an unknown member set is refused" {
	cat >"$T/o.c" <<-'EOF2'
	#include <errno.h>
	#include <stdio.h>
	#include <string.h>
	#include <sufs/sufs.h>
	/* a program built against a later header, with one member more */
	struct later { struct sufs_mkfs_opts o; uint64_t newer; };
	int main(void)
	{
		struct sufs_mkfs_opts a = SUFS_MKFS_OPTS_INIT, zeroed;
		struct later l;
		struct sufs_super sb;
		struct sufs_check_opts co;
		struct sufs_check_result r;

		memset(&zeroed, 0, sizeof(zeroed));
		memset(&l, 0, sizeof(l));
		l.o.size = sizeof(l);
		sufs_check_opts_init(&co);
		printf("%d %d %d", a.size == sizeof(a), co.size == sizeof(co), co.flags == 0);
		printf(" %d", sufs_mkfs_layout(8 << 20, &a, &sb));
		printf(" %d", sufs_mkfs_layout(8 << 20, &zeroed, &sb));
		printf(" %d", sufs_mkfs_layout(8 << 20, &l.o, &sb));
		l.newer = 1;
		printf(" %d", sufs_mkfs_layout(8 << 20, &l.o, &sb) == -EINVAL);
		a.size = 4;
		printf(" %d", sufs_mkfs_layout(8 << 20, &a, &sb) == -EINVAL);
		co.size = 4;
		printf(" %d\n", sufs_check("/nonexistent", &co, &r) == -EINVAL);
		return 0;
	}
	EOF2
	build "$T/o" "$T/o.c"
	run "$T/o"
	assert_success
	assert_output "1 1 1 0 0 0 1 1 1"
}

@test "the example of libsufs(3) builds against the installed library and prints what the page shows" {
	require_cmd python3
	python3 - "$SUFS_SRCDIR/man/libsufs.3" "$T/example.c" "$T/expected" <<-'EOF2'
	import re, sys
	page = open(sys.argv[1]).read()
	ex = page[page.index('.SH EXAMPLES'):]
	blocks = re.findall(r'^\.EX\n(.*?)^\.EE\n', ex, re.S | re.M)
	def text(s):
	    return re.sub(r'\\(\(..|.)', lambda m: {'e': '\\', '-': '-', '(aq': "'"}[m.group(1)], s)
	open(sys.argv[2], 'w').write(text(blocks[0]))
	run = text(blocks[1]).split('\n')
	open(sys.argv[3], 'w').write('\n'.join(l for l in run if not l.startswith('$ ')))
	EOF2
	cd "$T"
	build "$T/example" "$T/example.c"
	run --separate-stderr ./example
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$output" "$(cat "$T/expected")"
	run "$FSCK" -fn example.img
	assert_success
}
