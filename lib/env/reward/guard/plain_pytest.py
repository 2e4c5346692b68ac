"""swerl's grading runner for plain pytest files (lib/env/reward/plain-pytest.ts installs it).

Importing pytest costs ~190 ms of CPU, most of a small task's grading; a generated task's tests
are a few top-level functions of asserts. For test files pytest would run as exactly that --
``def test...():`` at a module's top level without parameters or decorators, nothing else named
for pytest, no conftest.py, ini file or package around them -- this runs the tests as pytest
does: the same ``sys.path`` (the file's folder, then the working directory), the same module
name, definition order, node ids relative to the working directory, a test failing on any
exception, and the same ``-rA`` summary lines. It writes the guard's signed record itself
(pytest_guard.py has the protocol). Anything else it hands to pytest, unchanged, before any code
of the repository is imported: ``python3 plain_pytest.py ARGS`` then is ``python3 -m pytest ARGS``.

The checks against the code under test are the guard's, where they apply here: the record's
writes bound before the repository's code runs, a start and an end line (an early exit leaves no
end), trace and profile functions, ``os._exit`` and ``atexit.register`` called from non-test
source, and this runner's own functions and builtins left as they were.
"""
import ast
import os
import sys

_TEST_DIRS = {'test', 'tests', 'testing'}
# Files pytest configures itself from, in the working directory or any folder above a test.
_CONFIG_FILES = ('conftest.py', 'pytest.ini', '.pytest.ini', 'pyproject.toml', 'tox.ini', 'setup.cfg', 'setup.py')
# Module-level functions pytest calls around tests (xunit style).
_XUNIT = {'setup_module', 'teardown_module', 'setUpModule', 'tearDownModule', 'setup_function', 'teardown_function', 'setup', 'teardown'}
_RUNNER_MODULES = {'pytest', '_pytest', 'unittest', 'pluggy'}


def _files(args):
    """The test files of pytest's arguments (the options this runner takes are plain-pytest.ts's)."""
    files, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg == '-p':
            skip = True
        elif not arg.startswith('-'):
            files.append(arg)
    return files


def _bound_names(node):
    """Names a module-level statement binds (None when it could bind names no one can read off it)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        if any(alias.name == '*' for alias in node.names):
            return None
        return [alias.asname or alias.name.split('.')[0] for alias in node.names]
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    names = []
    for target in targets:
        for part in ast.walk(target):
            if isinstance(part, ast.Name):
                names.append(part.id)
            elif not isinstance(part, (ast.Tuple, ast.List, ast.Store, ast.Load)):
                return None  # an attribute or a subscript: it changes something else
    return names


def _test_functions(path):
    """The file's test functions in order, or why pytest has to run it."""
    try:
        with open(path, 'rb') as f:
            tree = ast.parse(f.read(), path)
    except (OSError, ValueError, SyntaxError) as error:
        return 'it does not parse (%s)' % type(error).__name__
    tests = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            module = (node.module if isinstance(node, ast.ImportFrom) else None) or node.names[0].name
            if isinstance(node, ast.ImportFrom) and node.level:
                return 'a relative import'
            if module.split('.')[0] in _RUNNER_MODULES or any(alias.name.split('.')[0] in _RUNNER_MODULES for alias in node.names):
                return 'it imports the test runner'
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)):
            names = _bound_names(node)
            if names is None:
                return 'a statement at line %d binds names it does not spell out' % node.lineno
            for name in names:
                if name.lower().startswith('test') or name.startswith('pytest') or name in _XUNIT or name.startswith('__test') or name.startswith('collect_ignore'):
                    return 'line %d binds %s' % (node.lineno, name)
        elif isinstance(node, ast.FunctionDef):
            if _is_test_name(node.name):
                a = node.args
                if node.decorator_list or a.posonlyargs or a.args or a.vararg or a.kwonlyargs or a.kwarg:
                    return 'test %s takes parameters or decorators' % node.name
                if any(isinstance(inner, (ast.Yield, ast.YieldFrom, ast.Await)) for inner in ast.walk(node)):
                    return 'test %s is a generator' % node.name
                if node.name in tests:
                    return 'test %s is defined twice' % node.name
                tests.append(node.name)
            elif node.name in _XUNIT or node.name.startswith('pytest'):
                return 'function %s is a pytest hook or fixture' % node.name
        elif isinstance(node, ast.AsyncFunctionDef):
            if _is_test_name(node.name):
                return 'test %s is async' % node.name
        elif isinstance(node, ast.ClassDef):
            if node.name.startswith('Test') or node.bases or node.keywords:
                return 'class %s may be collected' % node.name
        elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            return 'line %d is a statement pytest collection could depend on' % node.lineno
    return tests


def _is_test_name(name):
    """pytest's default python_functions: the prefix 'test'."""
    return name.startswith('test')


def _why_not_plain(cwd, files):
    """Why pytest has to run these files (None: they are plain)."""
    if cwd == os.sep:
        return 'the working directory is the root'
    if not files:
        return 'no test file'
    folders = set()
    folder = cwd
    while True:
        folders.add(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    names = set()
    for rel in files:
        path = os.path.realpath(os.path.join(cwd, rel))
        if not path.startswith(cwd + os.sep) or not path.endswith('.py') or not os.path.isfile(path):
            return '%s is not a Python file under the working directory' % rel
        # pytest's node id is the path as given, normalized: only a path that is already its own
        # normal, symlink-free form is one this runner spells the same.
        if path != os.path.join(cwd, rel):
            return '%s is not in normal form (or passes a symlink)' % rel
        folder = os.path.dirname(path)
        if os.path.lexists(os.path.join(folder, '__init__.py')):
            return '%s is in a package' % rel
        while folder != cwd:
            folders.add(folder)
            folder = os.path.dirname(folder)
        name = os.path.basename(path)[:-3]
        if name in names or name in sys.modules:
            return 'module name %s is taken' % name
        names.add(name)
    for folder in folders:
        for config in _CONFIG_FILES:
            if os.path.lexists(os.path.join(folder, config)):
                return '%s configures pytest' % os.path.join(folder, config)
    return None


def _describe(error):
    """'Type: message', as pytest's summary line ends (the type alone where the message is empty or fails)."""
    try:
        message = str(error)
    except Exception:
        message = ''
    return '%s: %s' % (type(error).__name__, message) if message else type(error).__name__


def _hand_to_pytest(args):
    os.execv(sys.executable, [sys.executable, '-m', 'pytest'] + args)


class _NoInput:
    """stdin as pytest leaves it while capturing: reading it fails."""
    def _fail(self, *args):
        raise OSError('pytest: reading from stdin while output is captured!  Consider using `-s`.')
    read = readline = readlines = __next__ = _fail

    def __iter__(self):
        return self

    def fileno(self):
        raise OSError('redirected stdin is pseudofile, has no fileno()')

    def isatty(self):
        return False

    def close(self):
        pass


def _record(key, path):
    """The guard's record (pytest_guard.py's protocol: JSON lines after their HMAC-SHA256 under
    `key`), as two functions that hold everything they use: a later patch of a module reaches
    neither. No key: nothing is written."""
    import hmac
    import json
    write, dumps, new = os.write, json.dumps, hmac.new
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, 'O_CLOEXEC', 0), 0o600) if key else None
    tampered = []

    def emit(kind, **fields):
        if fd is not None:
            body = dumps(dict(fields, kind=kind), sort_keys=True)
            write(fd, (new(key, body.encode(), 'sha256').hexdigest() + ' ' + body + '\n').encode())

    def tamper(what):
        if what not in tampered:
            tampered.append(what)
            emit('tamper', what=what)

    return emit, tamper


def _source_caller(root, frames):
    """'file:line' when the nearest caller outside this runner is the repository's non-test source."""
    here = os.path.realpath(__file__)
    for frame in reversed(frames):
        path = os.path.realpath(frame.filename)
        if path == here:
            continue
        if not path.startswith(root + os.sep):
            return None
        rel = os.path.relpath(path, root)
        parts = set(os.path.normpath(rel).split(os.sep))
        name = os.path.basename(rel)
        if name == 'conftest.py' or name.startswith('test_') or name.endswith('_test.py') or parts & _TEST_DIRS:
            return None
        return '%s:%d' % (rel, frame.lineno)
    return None


def _runner_state():
    """name -> object for this module's globals and its classes' members."""
    state = {}
    for name, value in list(globals().items()):
        state[name] = value
        if isinstance(value, type) and value.__module__ == __name__:
            for member, inner in list(vars(value).items()):
                state['%s.%s' % (name, member)] = inner
    return state


def run(args):
    cwd = os.path.realpath(os.getcwd())
    files = _files(args)
    why = _why_not_plain(cwd, files)
    tests = {}
    for rel in files if why is None else []:
        found = _test_functions(os.path.join(cwd, rel))
        if isinstance(found, str):
            why = '%s: %s' % (rel, found)
            break
        tests[rel] = found
    if why is not None:
        _hand_to_pytest(args)

    import atexit
    import builtins
    import importlib
    import io
    import traceback

    emit, tamper = _record(os.environ.pop('SWERL_GUARD_KEY', '').encode(), os.environ.pop('SWERL_GUARD_RECORD', ''))
    # Bound now, as the record's writes are: a later patch of this module does not reach them.
    source_caller, runner_state = _source_caller, _runner_state
    root = os.path.realpath(os.environ.pop('SWERL_GUARD_ROOT', cwd))
    pid = os.getpid()
    real_exit, real_register, extract_stack = os._exit, atexit.register, traceback.extract_stack

    def guarded_exit(*a):
        if os.getpid() == pid:
            where = source_caller(root, extract_stack())
            if where:
                tamper('os._exit called from %s' % where)
        real_exit(*a)

    def guarded_register(fn, *a, **kw):
        where = source_caller(root, extract_stack())
        if where:
            tamper('atexit.register called from %s' % where)
        return real_register(fn, *a, **kw)

    os._exit, atexit.register = guarded_exit, guarded_register
    emit('start', pid=pid, runner='plain-pytest', version='1')
    out = os.dup(1)
    write = os.write

    def say(text):
        write(out, text.encode('utf-8', 'replace'))

    say('swerl plain-pytest runner: %s\n' % ' '.join(files))
    # What the code under test must leave as it is: this runner and the builtins.
    mine = runner_state()
    builtin = dict(vars(builtins))
    trace = (sys.gettrace(), sys.getprofile())
    # pytest's sys.path for a test file outside packages: its folder first, then the working
    # directory (python -m puts it where this script's folder is).
    sys.path[0] = cwd
    results, failures = [], []
    saved = sys.stdin, sys.stdout, sys.stderr
    try:
        for rel, names in tests.items():
            path = os.path.join(cwd, rel)  # real and normal already (_why_not_plain)
            folder = os.path.dirname(path)
            if sys.path[0] != folder:
                sys.path.insert(0, folder)
            name = os.path.basename(rel)[:-3]
            try:
                module = importlib.import_module(name)
                if os.path.realpath(getattr(module, '__file__', '') or '') != path:
                    raise ImportError('import file mismatch: %s is not %s' % (getattr(module, '__file__', None), rel))
            except KeyboardInterrupt:
                raise
            except BaseException:  # as pytest: anything but an interrupt is the file's collection error
                say('_____ ERROR collecting %s _____\n%s\n' % (rel, traceback.format_exc()))
                results.append(('ERROR', rel, 'collection failed'))
                continue
            # The functions as collected, as pytest holds them: a later swap in the module is not run.
            collected = {n: v for n, v in vars(module).items() if _is_test_name(n) and callable(v)}
            foreign = [n for n, v in collected.items() if os.path.realpath(getattr(getattr(v, '__code__', None), 'co_filename', '')) != path]
            if list(collected) != names or foreign:
                tamper('the test module %s was changed while it was imported' % rel)
            for test in names:
                fn = collected.get(test, None)
                nodeid = '%s::%s' % (rel, test)
                sys.stdin, sys.stdout, sys.stderr = _NoInput(), io.StringIO(), io.StringIO()
                try:
                    if fn is None:
                        raise LookupError('%s is gone from its module' % test)
                    fn()
                    verdict, why = 'passed', ''
                except KeyboardInterrupt:
                    raise
                except BaseException as error:
                    verdict, why = 'failed', _describe(error)
                    failures.append((nodeid, traceback.format_exc()))
                finally:
                    sys.stdin, sys.stdout, sys.stderr = saved
                if (sys.gettrace(), sys.getprofile()) != trace:
                    tamper('sys.settrace or sys.setprofile called during %s' % nodeid)
                emit('test', id=nodeid, verdict=verdict)
                results.append((verdict.upper(), nodeid, why.split('\n')[0][:200]))
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        now = runner_state()
        changed = sorted(k for k, v in mine.items() if now.get(k) is not v)
        changed += sorted('builtins.' + k for k, v in builtin.items() if vars(builtins).get(k) is not v and k != '_')
        for what in changed[:5]:
            tamper('the runner was changed: %s' % what)
        for nodeid, text in failures:
            say('%s\n%s\n' % (nodeid, text))
        say('=========================== short test summary info ============================\n')
        for status, nodeid, why in results:
            say('%s %s%s\n' % (status, nodeid, ' - ' + why if why else ''))
        emit('end', pid=pid, tests=len(results))
    return 0 if all(status == 'PASSED' for status, _, _ in results) else 1


if __name__ == '__main__':
    sys.exit(run(sys.argv[1:]))
