/* mtserr.c: human-readable names for enum mts_err. */
#include <stdlib.h>

#include "mtserr.h"

static const char *const mts_errstr[] = {
	[MTS_OK] = "success",
	[MTS_ERR_INVAL] = "invalid input",
	[MTS_ERR_NOTFOUND] = "not found",
	[MTS_ERR_CONFLICT] = "conflict",
	[MTS_ERR_TOOBIG] = "too large",
	[MTS_ERR_IO] = "i/o error",
	[MTS_ERR_DENIED] = "permission denied",
	[MTS_ERR_TIMEOUT] = "timed out",
	[MTS_ERR_UNIMPL] = "request type not supported",
	[MTS_ERR_VERSION] = "unsupported version",
	[MTS_ERR_CRYPTO] = "authentication failed",
	[MTS_ERR_STATE] = "invalid state",
	[MTS_ERR_CANCELED] = "canceled",
};

/* Accepts a code with either sign. */
const char *
mts_strerror(int err)
{
	int e = abs(err);

	if (e < 0 || (size_t)e >= sizeof(mts_errstr) / sizeof(mts_errstr[0]) ||
	    mts_errstr[e] == NULL)
		return "unknown error";
	return mts_errstr[e];
}
