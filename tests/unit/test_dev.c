/*
 * test_dev.c - the image-file device: open errors, whole-range reads and
 * writes, what lies past the end, counters, resizing, zeroing, read-only
 * devices; sizes with suffixes; probing for other file systems.
 */
#include "config.h"
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A temporary file of `bytes` bytes (zeros) for the test; removed at teardown. */
struct tfile {
	char *path;
	struct sufs_dev *dev;
};

static int setup_file(void **state)
{
	struct tfile *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->path = tu_temp_path("dev");
	*state = f;
	return 0;
}

static int teardown_file(void **state)
{
	struct tfile *f = *state;

	sufs_dev_close(f->dev);
	unlink(f->path);
	free(f->path);
	free(f);
	return 0;
}

static void open_sized(struct tfile *f, uint64_t bytes, unsigned flags)
{
	assert_int_equal(truncate(f->path, (off_t)bytes), 0);
	assert_int_equal(sufs_dev_open(f->path, flags, &f->dev), 0);
	assert_int_equal(f->dev->size, bytes);
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_size;
}

static void opening_a_missing_file_fails_with_enoent(void **state)
{
	struct tfile *f = *state;
	char *missing;
	struct sufs_dev *dev = NULL;

	assert_true(asprintf(&missing, "%s.missing", f->path) > 0);
	assert_int_equal(sufs_dev_open(missing, 0, &dev), -ENOENT);
	assert_int_equal(sufs_dev_open(missing, SUFS_DEV_RDWR, &dev), -ENOENT);
	assert_null(dev);
	free(missing);
}

static void opening_with_create_makes_an_empty_file(void **state)
{
	struct tfile *f = *state;

	unlink(f->path);
	assert_int_equal(sufs_dev_open(f->path, SUFS_DEV_RDWR | SUFS_DEV_CREATE, &f->dev), 0);
	assert_int_equal(f->dev->size, 0);
	assert_true(f->dev->writable);
	assert_false(f->dev->is_blockdev);
	assert_string_equal(f->dev->name, f->path);
	assert_int_equal(file_size(f->path), 0);
}

static void opening_a_directory_fails_with_eisdir(void **state)
{
	struct tfile *f = *state;
	char *dir;

	assert_true(asprintf(&dir, "%s.d", f->path) > 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(sufs_dev_open(dir, 0, &f->dev), -EISDIR);
	assert_null(f->dev);
	rmdir(dir);
	free(dir);
}

static void opening_a_character_device_is_refused_as_not_an_image(void **state)
{
	struct tfile *f = *state;

	assert_int_equal(sufs_dev_open("/dev/null", 0, &f->dev), -SUFS_ENOTIMAGE);
	assert_null(f->dev);
}

static void written_bytes_read_back_and_counters_count_them(void **state)
{
	struct tfile *f = *state;
	uint8_t out[3 * 4096], in[3 * 4096];

	open_sized(f, 16 * 4096, SUFS_DEV_RDWR);
	tu_pattern_fill(out, sizeof(out), 7, 0);
	assert_int_equal(sufs_dev_write(f->dev, 5 * 4096, out, sizeof(out)), 0);
	assert_int_equal(sufs_dev_write(f->dev, 0, out, 4096), 0);
	assert_int_equal(f->dev->writes, 2);
	assert_int_equal(f->dev->bytes_written, 4 * 4096);
	assert_int_equal(f->dev->reads, 0);

	memset(in, 0, sizeof(in));
	assert_int_equal(sufs_dev_read(f->dev, 5 * 4096, in, sizeof(in)), 0);
	assert_memory_equal(in, out, sizeof(in));
	assert_int_equal(sufs_dev_read(f->dev, 0, in, 4096), 0);
	assert_memory_equal(in, out, 4096);
	assert_int_equal(f->dev->reads, 2);
	assert_int_equal(f->dev->bytes_read, 4 * 4096);

	assert_int_equal(sufs_dev_barrier(f->dev), 0);
	assert_int_equal(f->dev->barriers, 1);
	assert_int_equal(f->dev->size, 16 * 4096); /* writes inside do not grow it */
}

static void reading_past_the_end_gives_zeros(void **state)
{
	struct tfile *f = *state;
	uint8_t out[4096], in[8192];
	unsigned i;

	open_sized(f, 0, SUFS_DEV_RDWR);
	tu_pattern_fill(out, sizeof(out), 3, 0);
	assert_int_equal(sufs_dev_write(f->dev, 0, out, sizeof(out)), 0);
	assert_int_equal(f->dev->size, 4096);

	memset(in, 0xaa, sizeof(in));
	assert_int_equal(sufs_dev_read(f->dev, 1 << 20, in, sizeof(in)), 0);
	for (i = 0; i < sizeof(in); i++)
		assert_int_equal(in[i], 0);

	/* straddling the end: data, then zeros */
	memset(in, 0xaa, sizeof(in));
	assert_int_equal(sufs_dev_read(f->dev, 2048, in, sizeof(in)), 0);
	assert_memory_equal(in, out + 2048, 2048);
	for (i = 2048; i < sizeof(in); i++)
		assert_int_equal(in[i], 0);
}

static void writing_past_the_end_grows_the_file(void **state)
{
	struct tfile *f = *state;
	uint8_t out[1024];

	open_sized(f, 4096, SUFS_DEV_RDWR);
	tu_pattern_fill(out, sizeof(out), 4, 0);
	assert_int_equal(sufs_dev_write(f->dev, 10240, out, sizeof(out)), 0);
	assert_int_equal(f->dev->size, 11264);
	assert_int_equal(file_size(f->path), 11264);
}

static void resize_sets_the_file_size_both_ways(void **state)
{
	struct tfile *f = *state;
	uint8_t out[4096], in[4096];

	open_sized(f, 4096, SUFS_DEV_RDWR);
	tu_pattern_fill(out, sizeof(out), 5, 0);
	assert_int_equal(sufs_dev_write(f->dev, 0, out, sizeof(out)), 0);
	assert_int_equal(sufs_dev_resize(f->dev, 1 << 20), 0);
	assert_int_equal(f->dev->size, 1 << 20);
	assert_int_equal(file_size(f->path), 1 << 20);
	assert_int_equal(sufs_dev_resize(f->dev, 2048), 0);
	assert_int_equal(f->dev->size, 2048);
	assert_int_equal(file_size(f->path), 2048);
	memset(in, 0xaa, sizeof(in));
	assert_int_equal(sufs_dev_read(f->dev, 0, in, sizeof(in)), 0);
	assert_memory_equal(in, out, 2048);
	assert_int_equal(in[2048], 0);
	assert_int_equal(in[4095], 0);
}

static void zero_returns_a_range_to_zeros_and_leaves_its_neighbours(void **state)
{
	struct tfile *f = *state;
	uint8_t out[3 * 4096], in[3 * 4096];
	unsigned i;

	open_sized(f, 8 * 4096, SUFS_DEV_RDWR);
	tu_pattern_fill(out, sizeof(out), 6, 0);
	assert_int_equal(sufs_dev_write(f->dev, 4096, out, sizeof(out)), 0);
	assert_int_equal(sufs_dev_zero(f->dev, 2 * 4096, 4096), 0);
	assert_int_equal(sufs_dev_read(f->dev, 4096, in, sizeof(in)), 0);
	assert_memory_equal(in, out, 4096);
	for (i = 4096; i < 2 * 4096; i++)
		assert_int_equal(in[i], 0);
	assert_memory_equal(in + 2 * 4096, out + 2 * 4096, 4096);
	/* punching keeps the size */
	assert_int_equal(f->dev->size, 8 * 4096);
	assert_int_equal(file_size(f->path), 8 * 4096);
	/* past the end there is nothing to do, and the file does not grow */
	assert_int_equal(sufs_dev_zero(f->dev, 64 * 4096, 4096), 0);
	assert_int_equal(file_size(f->path), 8 * 4096);
}

static void read_only_device_refuses_writes_with_erofs(void **state)
{
	struct tfile *f = *state;
	uint8_t buf[4096];

	open_sized(f, 8 * 4096, 0);
	assert_false(f->dev->writable);
	memset(buf, 0x5a, sizeof(buf));
	assert_int_equal(sufs_dev_write(f->dev, 0, buf, sizeof(buf)), -EROFS);
	assert_int_equal(sufs_dev_zero(f->dev, 0, 4096), -EROFS);
	assert_int_equal(sufs_dev_resize(f->dev, 4096), -EROFS);
	assert_int_equal(f->dev->writes, 0);
	assert_int_equal(f->dev->bytes_written, 0);
	assert_int_equal(file_size(f->path), 8 * 4096);
	assert_int_equal(sufs_dev_read(f->dev, 0, buf, sizeof(buf)), 0);
	assert_int_equal(buf[0], 0);
	/* nothing to make durable: a barrier is a no-op and not counted */
	assert_int_equal(sufs_dev_barrier(f->dev), 0);
	assert_int_equal(f->dev->barriers, 0);
}

/* A device of another kind than an image file: bytes in memory, no
 * resize; its writes fail once `fail_after` of them went through. */
struct memdev {
	uint8_t bytes[256 * 1024];
	unsigned writes, fail_after;
};

static int mem_read(struct sufs_dev *dev, uint64_t off, void *buf, size_t len)
{
	struct memdev *m = dev->priv;

	if (off > sizeof(m->bytes) || len > sizeof(m->bytes) - off)
		return -EIO;
	memcpy(buf, m->bytes + off, len);
	return 0;
}

static int mem_write(struct sufs_dev *dev, uint64_t off, const void *buf, size_t len)
{
	struct memdev *m = dev->priv;

	if (off > sizeof(m->bytes) || len > sizeof(m->bytes) - off || m->writes == m->fail_after)
		return -EIO;
	m->writes++;
	memcpy(m->bytes + off, buf, len);
	return 0;
}

static int mem_barrier(struct sufs_dev *dev)
{
	(void)dev;
	return 0;
}

static void mem_close(struct sufs_dev *dev)
{
	(void)dev;
}

static const struct sufs_dev_ops mem_ops = { mem_read, mem_write, mem_barrier, NULL, mem_close, NULL };

/* Zeroing on such a device writes zeros, 64 KiB at a time; it cannot be
 * resized; a write that fails stops the zeroing with its error. */
static void zero_on_another_kind_of_device_writes_zeros_and_resize_is_not_supported(void **state)
{
	static struct memdev m;
	struct sufs_dev dev = { .ops = &mem_ops, .size = sizeof(m.bytes), .writable = 1,
				.priv = &m };
	uint8_t in[sizeof(m.bytes)];
	uint64_t i;

	(void)state;
	memset(m.bytes, 0xa5, sizeof(m.bytes));
	m.fail_after = UINT32_MAX;
	/* 150000 bytes from 1000: three writes, the last short */
	assert_int_equal(sufs_dev_zero(&dev, 1000, 150000), 0);
	assert_int_equal(m.writes, 3);
	assert_int_equal(dev.writes, 3);
	assert_int_equal(dev.bytes_written, 150000);
	assert_int_equal(sufs_dev_read(&dev, 0, in, sizeof(in)), 0);
	for (i = 0; i < sizeof(in); i++)
		if (in[i] != (i >= 1000 && i < 151000 ? 0 : 0xa5))
			fail_msg("byte %llu is 0x%02x", (unsigned long long)i, in[i]);
	assert_int_equal(sufs_dev_resize(&dev, 4096), -EOPNOTSUPP);
	assert_int_equal(dev.size, sizeof(m.bytes));

	memset(m.bytes, 0xa5, sizeof(m.bytes));
	m.writes = 0;
	m.fail_after = 1;
	assert_int_equal(sufs_dev_zero(&dev, 0, 200000), -EIO);
	assert_int_equal(m.writes, 1);
	assert_int_equal(dev.write_error, -EIO);
	assert_int_equal(m.bytes[65535], 0);
	assert_int_equal(m.bytes[65536], 0xa5);
}

/* A file system cannot be opened for writing on a read-only device. */
static void opening_a_file_system_for_writing_on_a_read_only_device_fails_with_erofs(void **state)
{
	struct tfs t = { 0 };
	struct sufs_dev *dev;
	struct sufs_fs *fs = NULL;

	(void)state;
	tu_make(&t, 4 << 20, 1024);
	tu_close(&t);
	assert_int_equal(sufs_dev_open(t.path, 0, &dev), 0);
	assert_int_equal(sufs_open_dev(dev, SUFS_OPEN_RDWR, 0, &fs), -EROFS);
	assert_null(fs);
	/* the device stays the caller's after a failed open: read-only, it opens */
	assert_int_equal(sufs_open_dev(dev, 0, 0, &fs), 0);
	assert_int_equal(sufs_close(fs), 0); /* and the device with it */
	tu_destroy(&t);
}

/* ---- sizes ----------------------------------------------------------------- */

static void parse_size_accepts_every_suffix_in_powers_of_1024(void **state)
{
	static const struct {
		const char *s;
		uint64_t bytes;
	} ok[] = {
		{ "0", 0 },
		{ "123", 123 },
		{ "64K", 64ull << 10 },
		{ "64k", 64ull << 10 },
		{ "10M", 10ull << 20 },
		{ "10m", 10ull << 20 },
		{ "2G", 2ull << 30 },
		{ "2g", 2ull << 30 },
		{ "16T", 16ull << 40 },
		{ "16t", 16ull << 40 },
		{ "1KiB", 1024 },
		{ "8MB", 8ull << 20 },
		{ "3Mi", 3ull << 20 },
		{ "16777215T", 16777215ull << 40 },
		{ "18446744073709551615", UINT64_MAX },
	};
	uint64_t bytes;
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		bytes = 1;
		if (sufs_parse_size(ok[i].s, &bytes) != 0)
			fail_msg("\"%s\" was refused", ok[i].s);
		if (bytes != ok[i].bytes)
			fail_msg("\"%s\" gave %llu", ok[i].s, (unsigned long long)bytes);
	}
}

static void parse_size_refuses_malformed_and_overflowing_sizes(void **state)
{
	static const char *const bad[] = {
		"", "K", "abc", "-1", "+1", " 1", "1 ", "1.5M", "12X", "1KK", "1iB",
		"1P", "0x10", "16777216T", "18446744073709551616", "99999999999999999999K",
	};
	uint64_t bytes = 42;
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (sufs_parse_size(bad[i], &bytes) != -EINVAL)
			fail_msg("\"%s\" was not refused", bad[i]);
	assert_int_equal(sufs_parse_size(NULL, &bytes), -EINVAL);
	assert_int_equal(bytes, 42);
}

/* ---- probing ------------------------------------------------------------------ */

static int have_mke2fs(void)
{
	return system("PATH=\"$PATH:/sbin:/usr/sbin\" command -v mke2fs >/dev/null 2>&1") == 0;
}

static void probe_names_an_ext4_file_system_and_its_label(void **state)
{
	struct tfile *f = *state;
	char cmd[512], *what = NULL;

	snprintf(cmd, sizeof(cmd),
		 "PATH=\"$PATH:/sbin:/usr/sbin\" mke2fs -q -F -t ext4 -L root '%s' 8M "
		 ">/dev/null 2>&1", f->path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(sufs_dev_probe(f->path, &what), 0);
	assert_non_null(what);
	assert_string_equal(what, "ext4 file system (label \"root\")");
	free(what);
}

static void probe_finds_nothing_on_a_file_of_zeros(void **state)
{
	struct tfile *f = *state;
	char *what = (char *)"untouched";

	assert_int_equal(truncate(f->path, 8 << 20), 0);
	assert_int_equal(sufs_dev_probe(f->path, &what), 0);
	assert_null(what);
}

static void probe_of_a_missing_file_fails(void **state)
{
	struct tfile *f = *state;
	char *missing, *what = (char *)"untouched";

	assert_true(asprintf(&missing, "%s.missing", f->path) > 0);
	assert_true(sufs_dev_probe(missing, &what) < 0);
	assert_null(what);
	free(missing);
}

/* How many of the first `pages` pages of path are in the page cache. */
static size_t resident_pages(const char *path, size_t pages)
{
	long ps = sysconf(_SC_PAGESIZE);
	int fd = open(path, O_RDONLY);
	unsigned char vec[256];
	size_t i, n = 0;
	void *map;

	assert_true(fd >= 0 && pages <= sizeof(vec));
	map = mmap(NULL, pages * (size_t)ps, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(map != MAP_FAILED);
	assert_int_equal(mincore(map, pages * (size_t)ps, vec), 0);
	for (i = 0; i < pages; i++)
		n += vec[i] & 1;
	munmap(map, pages * (size_t)ps);
	close(fd);
	return n;
}

static void prefetch_brings_a_range_into_the_page_cache_and_stops_at_the_end(void **state)
{
	struct tfile *f = *state;
	size_t pages = 256, bytes = pages * (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *buf = malloc(bytes);
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	int fd, i;

	assert_non_null(buf);
	memset(buf, 0x5a, bytes);
	open_sized(f, bytes, SUFS_DEV_RDWR);
	assert_int_equal(sufs_dev_write(f->dev, 0, buf, bytes), 0);
	assert_int_equal(sufs_dev_barrier(f->dev), 0);
	fd = open(f->path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	close(fd);
	if (resident_pages(f->path, pages) == pages) {
		/* a file system that keeps its files in memory (tmpfs):
		 * nothing for a hint to do */
		free(buf);
		return;
	}
	/* past the end: clipped, not an error; then the whole file */
	sufs_dev_prefetch(f->dev, bytes, bytes);
	sufs_dev_prefetch(f->dev, 0, UINT64_MAX);
	for (i = 0; i < 200 && resident_pages(f->path, pages) < pages; i++)
		nanosleep(&pause, NULL);
	assert_int_equal(resident_pages(f->path, pages), pages);
	/* a hint reads nothing through the device's counters */
	assert_int_equal(f->dev->reads, 0);
	free(buf);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_file, teardown_file)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(opening_a_missing_file_fails_with_enoent),
		T(opening_with_create_makes_an_empty_file),
		T(opening_a_directory_fails_with_eisdir),
		T(opening_a_character_device_is_refused_as_not_an_image),
		T(written_bytes_read_back_and_counters_count_them),
		T(reading_past_the_end_gives_zeros),
		T(writing_past_the_end_grows_the_file),
		T(resize_sets_the_file_size_both_ways),
		T(zero_returns_a_range_to_zeros_and_leaves_its_neighbours),
		T(read_only_device_refuses_writes_with_erofs),
		T(prefetch_brings_a_range_into_the_page_cache_and_stops_at_the_end),
		cmocka_unit_test(zero_on_another_kind_of_device_writes_zeros_and_resize_is_not_supported),
		cmocka_unit_test(opening_a_file_system_for_writing_on_a_read_only_device_fails_with_erofs),
		cmocka_unit_test(parse_size_accepts_every_suffix_in_powers_of_1024),
		cmocka_unit_test(parse_size_refuses_malformed_and_overflowing_sizes),
		T(probe_finds_nothing_on_a_file_of_zeros),
		T(probe_of_a_missing_file_fails),
		T(probe_names_an_ext4_file_system_and_its_label), /* last: see below */
	};
	size_t n = sizeof(tests) / sizeof(tests[0]);

	/* Without mke2fs the ext4 probe cannot run.  cmocka 1.1's skip()
	 * reports "not ok # SKIP", which automake's TAP driver counts as a
	 * failure, so the test is left out with a TAP comment instead. */
	if (!have_mke2fs()) {
		printf("# mke2fs not found: %s not run\n", tests[n - 1].name);
		fflush(stdout);
		n--;
	}
	return _cmocka_run_group_tests("tests", tests, n, NULL, NULL);
}
