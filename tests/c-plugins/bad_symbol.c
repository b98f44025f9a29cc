/* A shared object that exports no `lockbench_plugin`. */
int some_other_lock_api(void);

int some_other_lock_api(void)
{
    return 0;
}
