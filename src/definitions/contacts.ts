/** How the outside world reads a running contact check. Pure: safe inside the workflow sandbox. */
import { defineQuery } from '@temporalio/workflow';

export const contactsProgressQuery = defineQuery<{ checked: number; total: number }>('progress');
