/**
 * A job command a test finds its processes by (commandPids): `sleep <seconds>.<pid>`, the pid of the
 * test's worker making it its own. A bare `sleep 3094` was also matched (and killed in clean-up) in
 * another test run on the same machine: a second checkout's suite, a run alongside this one.
 */
export const commandMark = (seconds: number): string[] => ['sleep', `${seconds}.${process.pid}`];
