/*
 * opts.c - the option structures that grow (sufs.h: sufs_mkfs_opts,
 * sufs_check_opts): from what a caller passed, the structure this library
 * knows, whatever release the caller was compiled against.
 */
#include "config.h"
#include "sufs_int.h"

#include <errno.h>

int opts_take(void *full, size_t full_size, const void *given, size_t first_size)
{
	uint32_t size;
	size_t n;

	memcpy(&size, given, sizeof(size));
	n = size;
	if (n == 0)
		n = first_size;       /* zeroed by hand: the first release's members */
	if (n < first_size)
		return -EINVAL;
	/* members of a newer release than this library: only at their
	 * defaults (zero) can they be ignored */
	if (n > full_size && !mem_is_zero((const uint8_t *)given + full_size, n - full_size))
		return -EINVAL;
	memset(full, 0, full_size);
	memcpy(full, given, n < full_size ? n : full_size);
	size = (uint32_t)full_size;
	memcpy(full, &size, sizeof(size));
	return 0;
}
