/**
 * git as swerl runs it on a task's repository: no hooks, no fsmonitor, no signing, no external
 * diff or textconv when swerl takes the patch (grading happens in a fresh sandbox: nothing the
 * candidate configured there exists), and no auto maintenance (after each commit git would
 * start `git maintenance run --auto`: two more processes for a repository that lives for one
 * episode).
 */
export const GIT = 'git -c user.name=swerl -c user.email=swerl@localhost -c core.hooksPath=/dev/null -c core.fsmonitor=false -c commit.gpgsign=false -c maintenance.auto=false -c gc.auto=0';
