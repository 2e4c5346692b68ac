"""swerl's grading guard for pytest (lib/env/reward/guard.ts installs it; docs/swe-env.md).

Loaded at grading only, with ``-p <a random module name>`` from a folder outside the work tree,
before any code of the repository is imported. It records each test's outcome from the call
itself (whether the test function raised, and what), and checks at the end that what the code
under test could have changed in the runner is as it was when collection began: pytest's and
pluggy's modules, unittest's, builtins, modules already imported, hook implementations, the
import hooks that rewrite assertions, trace and profile functions. It also notes calls to
``os._exit`` and ``atexit.register`` from the repository's non-test source.

Each record line is JSON after an HMAC-SHA256 of it under a key given in the environment, so
lines the code under test appends to the record file are told apart. The key and the record's
path are taken out of ``os.environ`` at load. This raises the bar for code running in the same
process; it is not a wall against code that goes looking for the guard (swerl's static look at
the patch flags such code).
"""
import atexit
import builtins
import hmac
import json
import os
import sys
import threading
import traceback
import unittest

import pytest
from _pytest.outcomes import Skipped, XFailed

# Modules whose contents the code under test has no business changing (with their submodules).
_WATCHED = ('_pytest', 'pytest', 'pluggy', 'unittest', 'builtins')
_TEST_DIRS = {'test', 'tests', 'testing'}
_HERE = os.path.realpath(__file__)
# The runner's own lazy caches: pytest fills these the first time a doctest runs (requests'
# rows collect with --doctest-modules), so a change from None is pytest's, not the code's.
_LAZY_CACHES = {'_pytest.doctest.CHECKER_CLASS', '_pytest.doctest.RUNNER_CLASS'}
_RUNNER_DIRS = tuple(os.path.dirname(os.path.realpath(m.__file__)) + os.sep for m in (pytest, unittest, sys.modules['_pytest'], sys.modules['pluggy']))


def _watched(name):
    return any(name == w or name.startswith(w + '.') for w in _WATCHED)


def _is_test_file(path):
    name = os.path.basename(path)
    parts = set(os.path.normpath(path).split(os.sep))
    return name == 'conftest.py' or name.startswith('test_') or name.endswith('_test.py') or bool(parts & _TEST_DIRS)


class _Guard:
    def __init__(self, key, record_path, root):
        # Bound now: a later patch of json, hmac or os does not reach the guard's writes.
        self._write, self._dumps, self._new = os.write, json.dumps, hmac.new
        self._fd = os.open(record_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, 'O_CLOEXEC', 0), 0o600)
        self._key = key
        self._root = root
        self._phases = {}
        self._tampered = []
        self._snapshot = None
        self._counted = 0
        self._pid = os.getpid()
        self._real_exit = os._exit
        self._real_register = atexit.register
        os._exit = self._exit
        atexit.register = self._register

    # -- the record ------------------------------------------------------------------------
    def emit(self, kind, **fields):
        body = self._dumps(dict(fields, kind=kind), sort_keys=True)
        mac = self._new(self._key, body.encode(), 'sha256').hexdigest()
        self._write(self._fd, (mac + ' ' + body + '\n').encode())

    def tamper(self, what):
        if what not in self._tampered:
            self._tampered.append(what)
            self.emit('tamper', what=what)

    # -- where a call comes from -----------------------------------------------------------
    def _source_file(self, path):
        """A file of the repository that is not a test (None when it is not one)."""
        if not path:
            return None
        real = os.path.realpath(path)
        if not (real == self._root or real.startswith(self._root + os.sep)):
            return None
        rel = os.path.relpath(real, self._root)
        return None if _is_test_file(rel) else rel

    def _called_from_source(self, frames, through=()):
        """'file:line' when the direct caller (past the guard and the folders `through`) is non-test source."""
        for frame in reversed(frames):
            path = os.path.realpath(frame.filename)
            if path == _HERE or any(path.startswith(folder) for folder in through):
                continue
            where = self._source_file(path)
            return None if where is None else '%s:%d' % (where, frame.lineno)
        return None

    def _exit(self, *args):
        # A forked child (multiprocessing) ends by os._exit: only this process's exit counts.
        if os.getpid() == self._pid:
            where = self._called_from_source(traceback.extract_stack())
            if where:
                self.tamper('os._exit called from %s' % where)
        self._real_exit(*args)

    def _register(self, fn, *args, **kwargs):
        where = self._called_from_source(traceback.extract_stack())
        if where:
            self.tamper('atexit.register called from %s' % where)
        return self._real_register(fn, *args, **kwargs)

    # -- the snapshot ----------------------------------------------------------------------
    def _machinery(self):
        """name -> object, for everything in the watched modules (and their classes' dicts)."""
        seen = {}
        for name, module in list(sys.modules.items()):
            if module is None or not _watched(name):
                continue
            for attr, value in list(vars(module).items()):
                seen['%s.%s' % (name, attr)] = value
                if isinstance(value, type) and getattr(value, '__module__', None) == name:
                    for cattr, cvalue in list(vars(value).items()):
                        seen['%s.%s.%s' % (name, attr, cattr)] = cvalue
        return seen

    def _hookimpls(self, pluginmanager):
        impls = set()
        for name in dir(pluginmanager.hook):
            caller = getattr(pluginmanager.hook, name, None)
            for impl in getattr(caller, 'get_hookimpls', lambda: [])():
                impls.add(impl.function)
        return impls

    def take_snapshot(self, session):
        self._pluginmanager = session.config.pluginmanager
        self._snapshot = {
            'machinery': self._machinery(),
            'modules': dict(sys.modules),
            'meta_path': list(sys.meta_path),
            'trace': (sys.gettrace(), sys.getprofile(), getattr(threading, '_trace_hook', None), getattr(threading, '_profile_hook', None)),
            'hooks': self._hookimpls(self._pluginmanager),
        }

    def check_trace(self, when):
        now = (sys.gettrace(), sys.getprofile(), getattr(threading, '_trace_hook', None), getattr(threading, '_profile_hook', None))
        names = ('sys.settrace', 'sys.setprofile', 'threading.settrace', 'threading.setprofile')
        for name, before, after in zip(names, self._snapshot['trace'], now):
            if after is not before:
                self.tamper('%s changed (%s)' % (name, when))

    def check_all(self):
        snap = self._snapshot
        if snap is None:
            self.tamper('collection never began under the guard')
            return
        self.check_trace('at the end')
        now = self._machinery()
        changed = sorted(k for k, v in snap['machinery'].items()
                         if k in now and now[k] is not v and k != 'builtins._' and not (k in _LAZY_CACHES and v is None))
        removed = sorted(k for k in snap['machinery'] if k not in now and k != 'builtins._')
        differ = changed + removed
        # A class replaced whole is named once, not with each of its members.
        named = [k for k in differ if k.rsplit('.', 1)[0] not in differ]
        for key in named[:5]:
            self.tamper('the runner was changed: %s' % key)
        # Only the runner's own modules: test suites reload and stub other modules as a matter
        # of course (astroid's tests replace xml.etree.ElementTree), and some modules are
        # registered by no import (pyexpat's xml.parsers.expat.model, pkg_resources' vendored
        # packages), so a guard over all of sys.modules failed right fixes of real rows.
        for name, module in snap['modules'].items():
            if _watched(name) and sys.modules.get(name) is not module and name in sys.modules:
                self.tamper('sys.modules[%r] was replaced' % name)
        for name, module in list(sys.modules.items()):
            if name in snap['modules'] or module is None or not _watched(name):
                continue
            spec = getattr(module, '__spec__', None)
            if spec is None or getattr(spec, 'name', None) != name:
                self.tamper('sys.modules[%r] holds an object no import made' % name)
        for hook in snap['meta_path']:
            if hook not in sys.meta_path:
                self.tamper('an import hook of the runner was removed (%s)' % type(hook).__name__)
        for hook in sys.meta_path:
            where = self._source_file(getattr(sys.modules.get(type(hook).__module__), '__file__', None) or '')
            if hook not in snap['meta_path'] and where:
                self.tamper('an import hook was installed from %s' % where)
        for fn in self._hookimpls(self._pluginmanager) - snap['hooks']:
            code = getattr(fn, '__code__', None)
            where = self._source_file(code.co_filename) if code is not None else None
            if where:
                self.tamper('a pytest hook was registered from %s (%s)' % (where, getattr(fn, '__name__', '?')))

    # -- a test's outcome, from its phases ---------------------------------------------------
    def phase(self, item, when, excinfo):
        self._phases.setdefault(item.nodeid, {})[when] = excinfo

    def verdict(self, item):
        phases = self._phases.pop(item.nodeid, {})
        self._counted += 1
        xfail = next(iter(item.iter_markers('xfail')), None)
        for when in ('setup', 'call', 'teardown'):
            exc = phases.get(when)
            if exc is None:
                continue
            kind = self._outcome_exception(exc)
            if kind is not None:
                return kind
            if when != 'call':
                return 'error'
            if xfail is not None:
                return 'xfailed'
            return 'failed'
        if 'call' not in phases:
            return 'error'
        if xfail is not None:
            return 'failed' if xfail.kwargs.get('strict', item.config.getini('xfail_strict')) else 'xpassed'
        return 'passed'

    def _outcome_exception(self, exc):
        """'skipped' or 'xfailed' for pytest's and unittest's outcome exceptions raised by tests or pytest; else None."""
        value = exc[1]
        if isinstance(value, (Skipped, unittest.SkipTest)):
            kind = 'skipped'
        elif isinstance(value, XFailed):
            kind = 'xfailed'
        else:
            return None
        # The direct caller of pytest.skip/xfail (or raiser of SkipTest), past pytest's own frames.
        where = self._called_from_source(traceback.extract_tb(exc[2]), through=_RUNNER_DIRS)
        if where:
            self.tamper('the test was %s from %s' % (kind, where))
            return 'failed'
        return kind

    # -- hooks ------------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session):
        self.take_snapshot(session)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item):
        outcome = yield
        self.phase(item, 'setup', outcome.excinfo)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item):
        outcome = yield
        self.phase(item, 'call', outcome.excinfo)
        self.check_trace('during %s' % item.nodeid)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_teardown(self, item):
        outcome = yield
        self.phase(item, 'teardown', outcome.excinfo)
        self.emit('test', id=item.nodeid, verdict=self.verdict(item))

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config):
        self.check_all()
        self.emit('end', pid=os.getpid(), tests=self._counted)


def pytest_configure(config):
    key = os.environ.pop('SWERL_GUARD_KEY', '').encode()
    record = os.environ.pop('SWERL_GUARD_RECORD', '')
    root = os.path.realpath(os.environ.pop('SWERL_GUARD_ROOT', str(config.rootpath)))
    if not key or not record:
        return  # a pytest the tests start themselves: not the run grading guards
    guard = _Guard(key, record, root)
    guard.emit('start', pid=os.getpid(), runner='pytest', version=pytest.__version__)
    config.pluginmanager.register(guard, 'swerl-guard')
