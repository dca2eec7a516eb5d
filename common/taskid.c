/* taskid.c: the syntax of a task id (see taskid.h). */
#include <string.h>

#include "taskid.h"

int
mts_task_id_valid(const char *id)
{
	size_t i, n = id ? strlen(id) : 0;

	if (n == 0 || n > MTS_TASK_ID_LEN)
		return 0;
	for (i = 0; i < n; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') ||
		        (id[i] >= '0' && id[i] <= '9') ||
		        (i > 0 &&
		            (id[i] == '-' || id[i] == '_' || id[i] == '.'))))
			return 0;
	return 1;
}
