#!/usr/bin/env bats
# libsufs in layers you can see (tests/layers/run, doc/ARCHITECTURE.md):
# every call between its files goes down or stays in its layer, no files
# call each other in a loop, and no file or function grows too long.

load helper

@test "libsufs calls only downward, in no loop, in files and functions of bounded length" {
	require_cmd nm
	require_cmd ctags
	require_cmd python3
	run "$SUFS_SRCDIR/tests/layers/run" "$SUFS_BUILDDIR"
	echo "$output"
	assert_success
	assert_output --regexp "files in 9 layers, [0-9]+ calls between files: 0 going up, in a loop or too long"
}

@test "the layers check sees a call that goes up" {
	require_cmd nm
	require_cmd ctags
	# a copy of the build with one object of the cache that calls the
	# operations: the check must name it
	mkdir -p "$T/b/libsufs"
	cp -r "$SUFS_BUILDDIR/libsufs/." "$T/b/libsufs/"
	printf 'int sufs_unlink(void *, unsigned, const char *, unsigned long);\nint up(void) { return sufs_unlink(0, 0, 0, 0); }\n' >"$T/up.c"
	cc -c "$T/up.c" -o "$T/up.o"
	ld -r "$T/b/libsufs/cache/libsufs_core_la-cache.o" "$T/up.o" -o "$T/both.o"
	cp "$T/both.o" "$T/b/libsufs/cache/libsufs_core_la-cache.o"
	run "$SUFS_SRCDIR/tests/layers/run" "$T/b"
	assert_failure 1
	assert_line --regexp "^up: cache/cache.c \(cache\) calls ops/names.c \(ops\): sufs_unlink"
}
