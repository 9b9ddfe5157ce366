/*
 * uuid.c - UUIDs as the programs take them: given as 8-4-4-4-12 hex
 * digits, or made (random, or from the time, as tune2fs -U makes them),
 * or cleared.  mkfs.sufs -U, sufs-tune -U and sufs-debug's
 * set_super_value uuid share it.
 */
#include "config.h"
#include "util.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

int uuid_parse(const char *s, uint8_t uuid[16])
{
	unsigned i = 0, n = 0;

	if (strlen(s) != 36)
		return -1;
	while (i < 36) {
		int hi, lo;
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i++] != '-')
				return -1;
			continue;
		}
		hi = hex_digit((unsigned char)s[i]);
		lo = hex_digit((unsigned char)s[i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		uuid[n++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	return 0;
}

static int random_bytes(uint8_t *b, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = getrandom(b + got, len - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	return 0;
}

int uuid_random(uint8_t uuid[16])
{
	int rc = random_bytes(uuid, 16);

	if (rc)
		return rc;
	uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40);   /* version 4 */
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);   /* RFC 4122 variant */
	return 0;
}

/* Version 1 (RFC 4122): 100-ns intervals since 1582-10-15, a random clock
 * sequence, and a random node with the multicast bit set, so that it is
 * never taken for a network card's address. */
int uuid_time(uint8_t uuid[16])
{
	struct timespec ts;
	uint64_t t;
	int rc;

	clock_gettime(CLOCK_REALTIME, &ts);
	t = (uint64_t)ts.tv_sec * 10000000u + (uint64_t)ts.tv_nsec / 100u +
	    0x01b21dd213814000ull;
	rc = random_bytes(uuid + 8, 8);
	if (rc)
		return rc;
	uuid[0] = (uint8_t)(t >> 24);
	uuid[1] = (uint8_t)(t >> 16);
	uuid[2] = (uint8_t)(t >> 8);
	uuid[3] = (uint8_t)t;
	uuid[4] = (uint8_t)(t >> 40);
	uuid[5] = (uint8_t)(t >> 32);
	uuid[6] = (uint8_t)(((t >> 56) & 0x0f) | 0x10); /* version 1 */
	uuid[7] = (uint8_t)(t >> 48);
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);
	uuid[10] |= 0x01;
	return 0;
}

int uuid_arg(const char *s, uint8_t uuid[16], const char **why)
{
	int rc;

	if (strcmp(s, "clear") == 0 || strcmp(s, "null") == 0) {
		memset(uuid, 0, 16);
		return 0;
	}
	if (strcmp(s, "random") == 0 || strcmp(s, "time") == 0) {
		rc = s[0] == 'r' ? uuid_random(uuid) : uuid_time(uuid);
		if (rc)
			*why = strerror(-rc);
		return rc ? -1 : 0;
	}
	if (uuid_parse(s, uuid)) {
		*why = "not a UUID (8-4-4-4-12 hex digits, or random, time or clear)";
		return -1;
	}
	return 0;
}

void uuid_format(const uint8_t uuid[16], char out[37])
{
	static const char hex[] = "0123456789abcdef";
	unsigned i, n = 0;

	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[n++] = '-';
		out[n++] = hex[uuid[i] >> 4];
		out[n++] = hex[uuid[i] & 15];
	}
	out[n] = '\0';
}
