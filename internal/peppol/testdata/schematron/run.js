// Runs ISO Schematron schemas over XML documents with node-schematron and
// prints, as JSON, every failed assertion and fired report with its flag
// (fatal, warning), so the Go test (internal/peppol, TestSchematron)
// decides what fails it.
//
//   node run.js SCHEMA.sch... -- DOCUMENT.xml...
//
// node-schematron evaluates the rules' XPath with fontoxpath (XPath 3.1)
// but leaves two parts of these schemas aside, which this script supplies:
//
//   - the assertions' flag attribute, read here from the schema by id;
//   - the XSLT functions (xsl:function) the Peppol schema declares for its
//     check-digit rules (u:mod11, u:gln, …). Each is turned, as written, into
//     an XQuery function of a library module that fontoxpath compiles; the
//     rules' calls reach it through a registered XPath function. Only the
//     instructions those functions use are translated (param, variable,
//     value-of, sequence, choose); any other makes this script fail rather
//     than guess.
'use strict';
const fs = require('fs');
const path = require('path');
const fx = require('fontoxpath');
const { Schema } = require('node-schematron');
const { parseXmlDocument } = require('slimdom');

const SCH = 'http://purl.oclc.org/dsdl/schematron';
const XSL = 'http://www.w3.org/1999/XSL/Transform';

function elements(node) {
  return Array.from(node.childNodes).filter((n) => n.nodeType === 1);
}

// XPath text goes into XQuery source: only '&' means something else there
// (an entity reference), inside string literals as much as outside.
function xq(expr) {
  return '(' + expr.replace(/&/g, '&amp;') + ')';
}

function stringLiteral(s) {
  return '"' + s.replace(/&/g, '&amp;').replace(/"/g, '""') + '"';
}

// value-of makes a text node of its items' string values joined by spaces.
function valueOf(el) {
  return 'string-join(for $kadens-i in ' + xq(el.getAttribute('select')) + ' return string($kadens-i), " ")';
}

// convert applies XSLT's conversion of a value to a declared atomic type
// (a text node from value-of becomes the xs:boolean it spells).
function convert(expr, as) {
  if (!as) return expr;
  const m = /^(xs:[A-Za-z]+)([?]?)$/.exec(as.trim());
  if (!m) throw new Error('unsupported type ' + as);
  return 'for $kadens-v in ' + expr + ' return ' + m[1] + '($kadens-v)';
}

function isAtomic(as) {
  return /^xs:[A-Za-z]+[?]?$/.test(as.trim());
}

function convertArg(v, as) {
  return isAtomic(as) ? '(' + convert(v, as) + ')' : v;
}

// body translates a sequence constructor: variables bind what follows.
function body(nodes, fn) {
  const els = nodes.filter((n) => n.nodeType === 1);
  if (els.length === 0) {
    const text = nodes.map((n) => n.textContent).join('');
    return stringLiteral(text);
  }
  const [first, ...rest] = els;
  if (first.namespaceURI !== XSL) throw new Error(fn + ': unsupported element ' + first.nodeName);
  switch (first.localName) {
    case 'variable': {
      const name = first.getAttribute('name');
      let value = first.hasAttribute('select') ? xq(first.getAttribute('select')) : body(Array.from(first.childNodes), fn);
      value = convert(value, first.getAttribute('as'));
      return 'let $' + name + ' := ' + value + ' return ' + (rest.length ? body(rest, fn) : '()');
    }
    case 'value-of':
    case 'sequence': {
      if (rest.length) throw new Error(fn + ': instructions after ' + first.localName);
      return first.localName === 'sequence' ? xq(first.getAttribute('select')) : valueOf(first);
    }
    case 'choose': {
      if (rest.length) throw new Error(fn + ': instructions after choose');
      let out = '';
      let otherwise = '()';
      for (const c of elements(first)) {
        if (c.localName === 'when') out += 'if ' + xq(c.getAttribute('test')) + ' then (' + body(Array.from(c.childNodes), fn) + ') else ';
        else if (c.localName === 'otherwise') otherwise = '(' + body(Array.from(c.childNodes), fn) + ')';
        else throw new Error(fn + ': unsupported element in choose: ' + c.nodeName);
      }
      return out + otherwise;
    }
    default:
      throw new Error(fn + ': unsupported XSLT instruction ' + first.nodeName);
  }
}

// registerFunctions compiles the schema's xsl:functions into one XQuery
// library module per namespace and registers each for the rules' XPath.
function registerFunctions(doc, schemaFile) {
  const root = doc.documentElement;
  const byNS = new Map();
  for (const el of elements(root)) {
    if (el.namespaceURI !== XSL) continue;
    if (el.localName !== 'function') throw new Error(schemaFile + ': unsupported top-level ' + el.nodeName);
    const qname = el.getAttribute('name');
    const [prefix, local] = qname.split(':');
    const uri = el.lookupNamespaceURI(prefix);
    const params = elements(el).filter((p) => p.namespaceURI === XSL && p.localName === 'param');
    const instructions = Array.from(el.childNodes).filter((n) => !(n.nodeType === 1 && n.localName === 'param'))
      .filter((n) => n.nodeType === 1 || n.textContent.trim() !== '');
    const sig = params.map((p) => '$' + p.getAttribute('name') + (p.getAttribute('as') ? ' as ' + p.getAttribute('as') : ''));
    const decl = 'declare %public function ' + qname + '(' + sig.join(', ') + ')' +
      (el.getAttribute('as') ? ' as ' + el.getAttribute('as') : '') + ' {\n  ' +
      convert('(' + body(instructions, qname) + ')', el.getAttribute('as')) + '\n};';
    if (!byNS.has(uri)) byNS.set(uri, { prefix, decls: [], fns: [] });
    const m = byNS.get(uri);
    m.decls.push(decl);
    m.fns.push({ local, qname, params: params.map((p) => p.getAttribute('as') || 'item()*'), as: el.getAttribute('as') || 'item()*' });
  }
  for (const [uri, m] of byNS) {
    fx.registerXQueryModule('module namespace ' + m.prefix + ' = ' + stringLiteral(uri) + ';\n' + m.decls.join('\n'));
    for (const f of m.fns) {
      // The arguments come to JavaScript and go back into the module's
      // function as variables: a node as it is, a sequence (an array here)
      // item by item, an atomic value as a JavaScript value, cast again to
      // the parameter's declared type.
      fx.registerCustomXPathFunction({ namespaceURI: uri, localName: f.local }, f.params.map((as) => (isAtomic(as) ? 'item()?' : 'item()*')), f.as, (_ctx, ...args) => {
        const bound = {};
        const exprs = args.map((a, i) => {
          const items = Array.isArray(a) ? a : a === null || a === undefined ? [] : [a];
          const names = items.map((item, j) => {
            bound['a' + i + '_' + j] = item;
            return '$a' + i + '_' + j;
          });
          return convertArg('(' + names.join(', ') + ')', f.params[i]);
        });
        return fx.evaluateXPath(f.qname + '(' + exprs.join(', ') + ')', null, null, bound, fx.evaluateXPath.ANY_TYPE, {
          language: fx.evaluateXPath.XQUERY_3_1_LANGUAGE, moduleImports: { [m.prefix]: uri },
        });
      });
    }
  }
}

function flags(doc) {
  const out = new Map();
  const all = fx.evaluateXPathToNodes('//(sch:assert|sch:report)[@id]', doc, null, {}, {
    namespaceResolver: (p) => (p === 'sch' ? SCH : null),
  });
  for (const a of all) out.set(a.getAttribute('id'), a.getAttribute('flag') || '');
  return out;
}

function main() {
  const args = process.argv.slice(2);
  const sep = args.indexOf('--');
  if (sep < 1 || sep === args.length - 1) {
    console.error('usage: node run.js SCHEMA.sch... -- DOCUMENT.xml...');
    process.exit(2);
  }
  const schemas = args.slice(0, sep);
  const documents = args.slice(sep + 1).map((f) => ({ file: f, text: fs.readFileSync(f, 'utf8') }));
  const results = [];
  for (const file of schemas) {
    const text = fs.readFileSync(file, 'utf8');
    const dom = parseXmlDocument(text);
    registerFunctions(dom, file);
    const flagOf = flags(dom);
    const schema = Schema.fromString(text);
    for (const d of documents) {
      for (const r of schema.validateString(d.text)) {
        results.push({
          document: path.basename(d.file), schema: path.basename(file), id: r.assertId || '',
          flag: flagOf.get(r.assertId) || '', report: r.isReport,
          location: fx.evaluateXPathToString('path(.)', r.context), message: (r.message || '').replace(/\s+/g, ' ').trim(),
        });
      }
    }
  }
  process.stdout.write(JSON.stringify({ schemas: schemas.map((s) => path.basename(s)), documents: documents.length, results }) + '\n');
}

main();
