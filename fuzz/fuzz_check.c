/*
 * fuzz_check.c - libFuzzer target: the checker on any image.
 *
 * The input is an image.  It is checked read-only (fsck -fn) on the bytes
 * themselves, which the device refuses to write; then a private copy is
 * repaired (fsck -fy) and checked again, and that second check must find
 * nothing: the checker's promise is that one repair leaves a file system a
 * second full check finds clean.  A crash, a sanitizer report, a leak or an
 * unclean second check is a finding (libFuzzer itself reports a target that
 * writes to its input).  FUZZ_VERBOSE=1 prints every problem found.
 *
 * Built by `make fuzz` (doc/FUZZING.md) with clang -fsanitize=fuzzer.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memdev.h"
#include "sufs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Print each problem: a finding then shows what led to it. */
static void report(void *arg, const struct sufs_problem *p, int fixed)
{
	(void)arg;
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "  %s: %s%s\n", p->def->name, p->message, fixed ? " (fixed)" : "");
}

static int check(uint8_t *bytes, size_t size, int writable, unsigned flags,
		 struct sufs_check_result *r)
{
	struct sufs_check_opts o = { .flags = flags | SUFS_CHECK_FORCE, .report = report };
	struct sufs_dev *dev = memdev_new(bytes, size, writable);
	int rc;

	if (!dev)
		abort();
	rc = sufs_check_dev(dev, &o, r);
	sufs_dev_close(dev);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sufs_check_result r, r2;
	uint8_t *copy;
	int rc;

	/* fsck -fn on the input itself: the device cannot write it */
	check((uint8_t *)data, size, 0, SUFS_CHECK_NO, &r);

	/* fsck -fy on a copy, then fsck -fn must be clean */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	rc = check(copy, size, 1, SUFS_CHECK_YES, &r);
	if (!rc && !(r.status & ~SUFS_EXIT_CORRECTED)) {
		rc = check(copy, size, 0, SUFS_CHECK_NO, &r2);
		if (rc || r2.problems) {
			fprintf(stderr, "fuzz_check: not clean after repair: rc %d (%s), "
				"first run %u problems, status %d; second run %u problems, status %d\n",
				rc, sufs_strerror(rc), r.problems, r.status, r2.problems, r2.status);
			abort();
		}
	}
	free(copy);
	return 0;
}
