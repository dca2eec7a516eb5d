/* taskid.h: the syntax of a task id, the one contract between the shim, which names a task's bundle and state directories after it, and reconciled, which checks an owner's Assign against it before the shim refuses it. */
#ifndef MTS_TASKID_H
#define MTS_TASKID_H

#define MTS_TASK_ID_LEN 64 /* the longest task id, without its NUL */

/* 1 when id is 1 to MTS_TASK_ID_LEN characters of [a-z0-9], then also
 * '-', '_' or '.' (so never "." or ".."): safe as a file name. */
int mts_task_id_valid(const char *id);

#endif
