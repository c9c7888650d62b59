#!/usr/bin/env python3
"""Generate the ABI conformance checks for include/xcuda/cuda.h.

Reads our header and (optionally) a CUDA toolkit's cuda.h and writes a C++
fragment, abi_checks.inc, that abi_conformance_test.cpp includes in three
stages (selected by XCUDA_ABI_STAGE):

  1  before our header is included (inside namespace `ours`): renames every
     entry point we declare to xcuda_abi_ours_<name> so that our prototypes
     cannot collide with the toolkit's extern "C" declarations;
  2  after our header, before the toolkit's: captures the values of all of our
     object-like macros and plain-name mappings, then #undefs them (and the
     renames) so the toolkit header can define its own;
  3  after the toolkit header: maps our types onto the toolkit's and
     static_asserts that enumerators, typedefs, struct/union layouts (sizeof,
     alignof, every field's offsetof and type), macros, name mappings and
     prototypes agree.

The set of names checked is the union of what our header declares and, when
--toolkit-header is given, what the toolkit declares (public, non-per-thread
mode), so both a wrong value and a missing declaration fail the build.

Only the Python standard library is used. The parser understands the subset
of C used by cuda.h-style headers (typedef'd enums/structs/unions, handle and
function-pointer typedefs, prototypes, object-like macros, #if/#ifdef with
defined() and integer comparisons).
"""

import argparse
import re
import sys
from collections import OrderedDict

# --------------------------------------------------------------------------
# A small preprocessor: evaluates conditionals, records object-like macros.
# --------------------------------------------------------------------------

_COMMENT_RE = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)


def strip_comments(text):
    # Keep line structure so that directives stay on their own lines.
    return _COMMENT_RE.sub(lambda m: '\n' * m.group(0).count('\n') + ' ', text)


def _eval_condition(expr, macros):
    expr = re.sub(r'defined\s*\(\s*(\w+)\s*\)', lambda m: ' 1 ' if m.group(1) in macros else ' 0 ', expr)
    expr = re.sub(r'defined\s+(\w+)', lambda m: ' 1 ' if m.group(1) in macros else ' 0 ', expr)
    expr = re.sub(r'\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b', r'\1', expr)

    def ident(m):
        name = m.group(0)
        val = macros.get(name, '0') or '0'
        return ' (%s) ' % val if re.fullmatch(r'[\s\d()xXa-fA-F+-]+', val) else ' 0 '
    expr = re.sub(r'\b[A-Za-z_]\w*\b', ident, expr)
    expr = expr.replace('&&', ' and ').replace('||', ' or ')
    expr = re.sub(r'!(?!=)', ' not ', expr)
    try:
        return bool(eval(expr, {'__builtins__': {}}, {}))
    except Exception as exc:  # pragma: no cover - diagnostic path
        raise SystemExit('generate_checks.py: cannot evaluate #if %r: %s' % (expr, exc))


def preprocess(text, predefined):
    """Returns (code, macros): code is the active text without directives;
    macros is an OrderedDict name -> value of object-like macros defined in
    active regions (first definition wins for reporting, #undef removes)."""
    macros = dict(predefined)
    defined_here = OrderedDict()
    text = strip_comments(text)
    # Join continuation lines.
    text = re.sub(r'\\\n', ' ', text)
    out = []
    stack = []  # entries: [active, taken_branch, parent_active]
    active = True
    for line in text.split('\n'):
        m = re.match(r'\s*#\s*(\w+)\s*(.*)$', line)
        if not m:
            if active:
                out.append(line)
            continue
        d, rest = m.group(1), m.group(2).strip()
        if d in ('if', 'ifdef', 'ifndef'):
            if d == 'if':
                cond = _eval_condition(rest, macros) if active else False
            elif d == 'ifdef':
                cond = rest.split()[0] in macros
            else:
                cond = rest.split()[0] not in macros
            stack.append([active and cond, active and cond, active])
            active = active and cond
        elif d == 'elif':
            top = stack[-1]
            cond = (not top[1]) and top[2] and _eval_condition(rest, macros)
            top[0] = cond
            top[1] = top[1] or cond
            active = cond
        elif d == 'else':
            top = stack[-1]
            top[0] = top[2] and not top[1]
            top[1] = True
            active = top[0]
        elif d == 'endif':
            stack.pop()
            active = stack[-1][0] if stack else True
        elif not active:
            continue
        elif d == 'define':
            mm = re.match(r'(\w+)(\(?)(.*)$', rest)
            name, fnlike, value = mm.group(1), mm.group(2), mm.group(3).strip()
            if fnlike:
                macros[name] = None
                continue
            macros[name] = value
            defined_here.setdefault(name, value)
        elif d == 'undef':
            macros.pop(rest.split()[0], None)
    if stack:
        raise SystemExit('generate_checks.py: unbalanced #if')
    return '\n'.join(out), defined_here


# --------------------------------------------------------------------------
# Declaration scanner.
# --------------------------------------------------------------------------

def split_top(text, sep=';'):
    """Split at separators outside (), [] and {}."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in '([{':
            depth += 1
        elif ch in ')]}':
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(''.join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    tail = ''.join(cur).strip()
    if tail:
        parts.append(tail)
    return [p for p in parts if p]


def matching_brace(text, open_idx):
    depth = 0
    for i in range(open_idx, len(text)):
        if text[i] == '{':
            depth += 1
        elif text[i] == '}':
            depth -= 1
            if depth == 0:
                return i
    raise SystemExit('generate_checks.py: unbalanced braces')


class Record:
    def __init__(self, kind, tag, members):
        self.kind = kind        # 'struct' | 'union'
        self.tag = tag          # may be None (unnamed)
        self.members = members  # list of Member


class Member:
    def __init__(self, name, record=None):
        self.name = name        # '' for an anonymous struct/union member
        self.record = record    # nested Record when defined inline


def parse_record_body(body):
    members = []
    for stmt in split_top(body):
        stmt = re.sub(r'XCUDA_ALIGNAS\s*\([^)]*\)|alignas\s*\([^)]*\)|_Alignas\s*\([^)]*\)', ' ', stmt).strip()
        m = re.match(r'(struct|union)\b\s*(\w+)?\s*\{', stmt)
        if m:
            ob = stmt.index('{')
            cb = matching_brace(stmt, ob)
            sub = Record(m.group(1), m.group(2), parse_record_body(stmt[ob + 1:cb]))
            members.append(Member(stmt[cb + 1:].strip(), sub))
            continue
        for decl in split_top(stmt, ','):
            # the first declarator carries the type; only one per line in practice
            m = re.search(r'(\w+)\s*(\[[^\]]*\]\s*)*$', decl)
            if not m:
                raise SystemExit('generate_checks.py: cannot parse member %r' % stmt)
            members.append(Member(m.group(1)))
            break
    return members


class Header:
    def __init__(self):
        self.enums = OrderedDict()      # typedef name -> (tag or None, [enumerators])
        self.records = OrderedDict()    # tag -> Record (top level, tagged)
        self.handles = OrderedDict()    # typedef name -> tag of the incomplete struct
        self.typedefs = OrderedDict()   # every typedef name -> kind
        self.functions = []             # names, in order
        self.macros = OrderedDict()     # object-like macros
        self.mappings = []              # plain API name macros (cuXxx)


def scan(code, macros):
    h = Header()
    for name, value in macros.items():
        if name.startswith('XCUDA_'):
            continue  # our own configuration / include-guard macros
        if re.match(r'cu[A-Z]', name):
            h.mappings.append(name)
        else:
            h.macros[name] = value
    # The toolkit spells one typedef name with a token-pasting helper.
    code = re.sub(r'_CONCAT_OUTER\(\s*(\w+)\s*,\s*(\w+)\s*\)',
                  lambda m: m.group(1) + (macros.get(m.group(2)) or m.group(2)), code)
    for stmt in split_top(code):
        s = re.sub(r'\b(__CUDA_DEPRECATED|CUDAAPI|CUDA_CB)\b', ' ', stmt)
        s = re.sub(r'\s+', ' ', s).strip()
        if s.startswith('extern "C"') or s in ('}',):
            continue
        if s.startswith('typedef'):
            m = re.match(r'typedef enum\s*(\w+)?\s*\{', s)
            if m:
                ob = s.index('{')
                cb = matching_brace(s, ob)
                names = []
                for e in split_top(s[ob + 1:cb], ','):
                    mm = re.match(r'(\w+)', e.strip())
                    if mm:
                        names.append(mm.group(1))
                td = s[cb + 1:].strip()
                h.enums[td] = (m.group(1), names)
                h.typedefs[td] = 'enum'
                continue
            m = re.match(r'typedef (struct|union)\s*(\w+)?\s*\{', s)
            if m:
                ob = s.index('{')
                cb = matching_brace(s, ob)
                rec = Record(m.group(1), m.group(2), parse_record_body(s[ob + 1:cb]))
                td = s[cb + 1:].strip()
                h.records[rec.tag] = rec
                h.typedefs[td] = 'record'
                continue
            m = re.match(r'typedef (struct|union) (\w+) ?\* ?(\w+)$', s)
            if m:
                h.handles[m.group(3)] = m.group(2)
                h.typedefs[m.group(3)] = 'handle'
                continue
            m = re.match(r'typedef .*\( ?\* ?(\w+) ?\) ?\(.*\)$', s)
            if m:
                h.typedefs[m.group(1)] = 'fnptr'
                continue
            m = re.match(r'typedef .*?(\w+)$', s)
            if m:
                h.typedefs[m.group(1)] = 'alias'
                continue
            raise SystemExit('generate_checks.py: cannot parse %r' % s[:120])
        m = re.match(r'CUresult (\w+) ?\(', s)
        if m:
            h.functions.append(m.group(1))
    return h


C_PREDEFINED = {'__GNUC__': '12', '__LP64__': '1', '__STDC_VERSION__': '201710L', '__linux__': '1'}


def load(path, extra=()):
    text = open(path, encoding='utf-8').read()
    pre = dict(C_PREDEFINED)
    for d in extra:
        pre[d] = '1'
    code, macros = preprocess(text, pre)
    return scan(code, macros), macros


# --------------------------------------------------------------------------
# Emission.
# --------------------------------------------------------------------------

def walk_fields(rec, prefix=''):
    """Yields (path, member) for every member, flattening anonymous members."""
    for m in rec.members:
        if m.record is not None and m.name == '':
            yield from walk_fields(m.record, prefix)
            continue
        path = prefix + m.name
        yield path, m
        if m.record is not None:
            yield from walk_fields(m.record, path + '.')


def nested_tags(rec, scope):
    for m in rec.members:
        if m.record is not None:
            if m.record.tag:
                yield scope + '::' + m.record.tag
                yield from nested_tags(m.record, scope + '::' + m.record.tag)
            else:
                yield from nested_tags(m.record, scope)


def classify_macro(value):
    v = value.strip()
    if v == '':
        return 'str'
    if re.search(r'\(\s*(void\s*\*|CUstream)\s*\)', v):
        return 'ptr'
    return 'int'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--header', required=True, help='include/xcuda/cuda.h')
    ap.add_argument('--toolkit-header', help="the CUDA toolkit's cuda.h (adds its names to the checked set)")
    ap.add_argument('-o', '--output', required=True)
    ap.add_argument('--summary', action='store_true', help='print what is checked')
    args = ap.parse_args()

    ours, _ = load(args.header)
    ours_legacy, _ = load(args.header, ['XCUDA_EXPORTED_NAMES_ONLY'])
    ours_ptds, _ = load(args.header, ['CUDA_API_PER_THREAD_DEFAULT_STREAM'])

    legacy_records = [t for t in ours_legacy.records if t not in ours.records]
    legacy_typedefs = [t for t in ours_legacy.typedefs if t not in ours.typedefs]
    legacy_functions = [f for f in ours_legacy.functions if f not in ours.functions]
    ptds_functions = [f for f in ours.functions if f.endswith('_ptds') or f.endswith('_ptsz')]
    current_functions = [f for f in ours.functions if f not in ptds_functions]

    enums = OrderedDict((k, (v[0], list(v[1]))) for k, v in ours.enums.items())
    typedefs = list(ours.typedefs)
    records = OrderedDict(ours.records)
    macros = OrderedDict(ours.macros)
    mappings = list(OrderedDict.fromkeys(ours.mappings + ours_ptds.mappings))
    toolkit_only = {'enumerators': 0, 'typedefs': 0, 'records': 0, 'macros': 0, 'mappings': 0, 'functions': 0}
    funcs_tk = []

    if args.toolkit_header:
        tk, tk_macros = load(args.toolkit_header)
        tk_ptds, _ = load(args.toolkit_header, ['CUDA_API_PER_THREAD_DEFAULT_STREAM'])
        for td, (tag, names) in tk.enums.items():
            if td not in enums:
                enums[td] = (tag, [])
                toolkit_only['enumerators'] += len(names)
            for n in names:
                if n not in enums[td][1]:
                    enums[td][1].append(n)
                    toolkit_only['enumerators'] += 1
        for td in tk.typedefs:
            if td not in typedefs:
                typedefs.append(td)
                toolkit_only['typedefs'] += 1
        for tag, rec in tk.records.items():
            if tag not in records:
                records[tag] = None  # sizeof/alignof only; fails if we lack it
                toolkit_only['records'] += 1
        for name, value in tk.macros.items():
            if name.startswith('_') or name in ('__cuda_cuda_h__',):
                continue
            if name not in macros:
                macros[name] = value
                toolkit_only['macros'] += 1
        for name in tk.mappings + tk_ptds.mappings:
            if name not in mappings:
                mappings.append(name)
                toolkit_only['mappings'] += 1

        # Resolve the toolkit's declared names through its default-mode mappings.
        def resolve(name, seen=()):
            v = tk_macros.get(name)
            if v is None or name in seen:
                return name
            m = re.fullmatch(r'__CUDA_API_PT(?:DS|SZ)\((\w+)\)', v.strip())
            if m:
                return m.group(1)
            if re.fullmatch(r'\w+', v.strip()):
                return resolve(v.strip(), seen + (name,))
            return name
        for f in tk.functions:
            r = resolve(f)
            if r not in funcs_tk:
                funcs_tk.append(r)
        for f in funcs_tk:
            if f not in current_functions:
                current_functions.append(f)
                toolkit_only['functions'] += 1

    all_functions = list(OrderedDict.fromkeys(ours.functions + ours_legacy.functions))
    renamed = list(OrderedDict.fromkeys(all_functions + current_functions))
    legacy_fn_set = set(legacy_functions)

    L = []
    w = L.append
    w('// Generated by tests/abi/generate_checks.py from %s -- do not edit.' % args.header.split('/')[-1])
    w('// Included three times by abi_conformance_test.cpp (XCUDA_ABI_STAGE 1..3).')
    w('')

    # ---------------- stage 1
    w('#if XCUDA_ABI_STAGE == 1')
    w('#if XCUDA_ABI_CHECK_FUNCS')
    for f in renamed:
        if f in legacy_fn_set:
            continue
        w('#define %s xcuda_abi_ours_%s' % (f, f))
    w('#if XCUDA_ABI_CHECK_LEGACY')
    w('// Legacy names are plain-name macros unless XCUDA_EXPORTED_NAMES_ONLY is set.')
    for f in legacy_functions:
        w('#define %s xcuda_abi_ours_%s' % (f, f))
    w('#endif')
    w('#else')
    w('#define XCUDA_NO_PROTOTYPES')
    w('#endif')

    # ---------------- stage 2
    w('#elif XCUDA_ABI_STAGE == 2')
    w('#if XCUDA_ABI_CHECK_FUNCS')
    for f in renamed:
        if f in legacy_fn_set:
            continue
        w('#undef %s' % f)
    w('#if XCUDA_ABI_CHECK_LEGACY')
    for f in legacy_functions:
        w('#undef %s' % f)
    w('#endif')
    w('#else')
    w('#undef XCUDA_NO_PROTOTYPES')
    w('#endif')
    w('namespace xcuda_abi_ours_macros {')
    w('using namespace ours;')
    for name, value in macros.items():
        k = classify_macro(value)
        if k == 'int':
            w('constexpr auto v_%s = %s;' % (name, name))
        elif k == 'ptr':
            w('inline std::uintptr_t p_%s() { return reinterpret_cast<std::uintptr_t>(%s); }' % (name, name))
        else:
            w('constexpr const char *s_%s = XCUDA_ABI_STR(%s);' % (name, name))
    w('#if XCUDA_ABI_CHECK_MAPPINGS')
    for name in mappings:
        w('constexpr const char *m_%s = XCUDA_ABI_STR(%s);' % (name, name))
    w('#endif')
    w('}  // namespace xcuda_abi_ours_macros')
    for name in macros:
        w('#undef %s' % name)
    for name in mappings:
        w('#undef %s' % name)

    # ---------------- stage 3
    w('#elif XCUDA_ABI_STAGE == 3')
    w('namespace xcuda_abi {')
    w('// Our types -> the toolkit\'s types.')
    mapped = []
    for td, (tag, _) in ours_legacy.enums.items():
        mapped.append(tag or td)
    for tag, rec in ours_legacy.records.items():
        mapped.append(tag)
        mapped.extend(nested_tags(rec, tag))
    for td, tag in ours_legacy.handles.items():
        mapped.append(tag)
    mapped = list(OrderedDict.fromkeys(mapped))
    legacy_set = set(legacy_records)
    for t in mapped:
        guard = t.split('::')[0] in legacy_set
        if guard:
            w('#if XCUDA_ABI_CHECK_LEGACY')
        w('template <> struct xtr<ours::%s> { using type = ::%s; };' % (t, t))
        if guard:
            w('#endif')
    w('}  // namespace xcuda_abi')
    w('')

    counts = OrderedDict((k, 0) for k in ('enums', 'enumerators', 'typedefs', 'records', 'fields',
                                          'macros', 'mappings', 'functions', 'ptds_functions',
                                          'legacy_functions', 'legacy_records', 'legacy_fields'))

    w('// ---- enumerations')
    for td, (tag, names) in enums.items():
        w('static_assert(sizeof(ours::%s) == sizeof(::%s), "sizeof %s");' % (td, td, td))
        w('static_assert(std::is_same_v<std::underlying_type_t<ours::%s>, std::underlying_type_t<::%s>>, '
          '"underlying type of %s");' % (td, td, td))
        counts['enums'] += 1
        for n in names:
            w('XCUDA_ABI_ENUMERATOR(%s, %s);' % (td, n))
            counts['enumerators'] += 1

    w('// ---- typedefs')
    legacy_td = set(legacy_typedefs)
    for td in typedefs + [t for t in legacy_typedefs if t not in typedefs]:
        if td in legacy_td:
            w('#if XCUDA_ABI_CHECK_LEGACY')
        w('XCUDA_ABI_TYPEDEF(%s);' % td)
        if td in legacy_td:
            w('#endif')
        counts['typedefs'] += 1

    w('// ---- structures and unions')
    all_records = OrderedDict(records)
    for t in legacy_records:
        all_records[t] = ours_legacy.records[t]
    for tag, rec in all_records.items():
        legacy = tag in legacy_set
        if legacy:
            w('#if XCUDA_ABI_CHECK_LEGACY')
        w('XCUDA_ABI_RECORD(%s);' % tag)
        counts['legacy_records' if legacy else 'records'] += 1
        if rec is not None:
            for path, m in walk_fields(rec):
                if m.record is not None and not m.record.tag:
                    w('XCUDA_ABI_FIELD_LAYOUT(%s, %s);' % (tag, path))
                else:
                    w('XCUDA_ABI_FIELD(%s, %s);' % (tag, path))
                counts['legacy_fields' if legacy else 'fields'] += 1
        if legacy:
            w('#endif')

    w('// ---- macros')
    for name, value in macros.items():
        k = classify_macro(value)
        if k == 'int':
            w('XCUDA_ABI_MACRO_INT(%s);' % name)
        elif k == 'str':
            w('XCUDA_ABI_MACRO_STR(%s);' % name)
        counts['macros'] += 1
    w('#if XCUDA_ABI_CHECK_MAPPINGS')
    for name in mappings:
        w('XCUDA_ABI_MAPPING(%s);' % name)
        counts['mappings'] += 1
    w('#endif')

    w('// ---- prototypes')
    w('#if XCUDA_ABI_CHECK_FUNCS == 1')
    w('// Public toolkit mode: current entry points by name; per-thread variants')
    w('// against the entry point they shadow (same signature).')
    for f in current_functions:
        w('XCUDA_ABI_FUNCTION(%s, %s);' % (f, f))
        counts['functions'] += 1
    for f in ptds_functions:
        w('XCUDA_ABI_FUNCTION(%s, %s);' % (f, f[:-5]))
        counts['ptds_functions'] += 1
    w('#elif XCUDA_ABI_CHECK_FUNCS == 2')
    w('// Toolkit built with __CUDA_API_VERSION_INTERNAL: every exported symbol by name.')
    w('// Its per-thread macros would rename the names below; drop them first.')
    for name in mappings:
        w('#undef %s' % name)
    for f in all_functions:
        w('XCUDA_ABI_FUNCTION(%s, %s);' % (f, f))
    counts['legacy_functions'] = len(legacy_functions)
    w('#endif')

    w('')
    w('namespace xcuda_abi {')
    w('// Pointer-valued macros cannot be compared in a constant expression.')
    w('inline void check_pointer_macros(std::vector<std::string> &bad) {')
    for name, value in macros.items():
        if classify_macro(value) == 'ptr':
            w('    if (xcuda_abi_ours_macros::p_%s() != reinterpret_cast<std::uintptr_t>(%s)) bad.push_back("%s");'
              % (name, name, name))
    w('}')
    w('struct Counts {')
    for k, v in counts.items():
        w('    static constexpr int %s = %d;' % (k, v))
    w('};')
    w('}  // namespace xcuda_abi')
    w('#endif  // XCUDA_ABI_STAGE')

    with open(args.output, 'w') as fh:
        fh.write('\n'.join(L) + '\n')

    if args.summary:
        for k, v in counts.items():
            print('%-18s %d' % (k, v))
        if args.toolkit_header:
            print('names only the toolkit declares (must fail the build if any):', toolkit_only)
        print('toolkit current entry points: %d' % len(funcs_tk))
    return 0


if __name__ == '__main__':
    sys.exit(main())
