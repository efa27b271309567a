import JSZip from 'jszip';
import PDFDocument from 'pdfkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, eventually, startTestService, type TestService } from './helpers.ts';
import { newAgent, newOrg, type Api } from './support/orgs.ts';
import { expectWellFormedProblem } from './support/problems.ts';
import { recordFixture, replayAll } from './support/replay.ts';
import { workflowIds } from '../src/temporal/ids.ts';

// Passages are not encoded here (the sentence encoder would take most of each parse's time); retrieval by words is what cites.
let svc: TestService;
beforeAll(async () => { svc = await startTestService({ SENTENCE_ENCODER: 'off' }); });
afterAll(async () => { await svc?.stop(); });

const REST = '/api/v1/rest';

/** A PDF made here, one string per page; `opts` may ask for passwords. */
function pdf(pages: string[], opts: PDFKit.PDFDocumentOptions = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ autoFirstPage: false, ...opts });
    const chunks: Buffer[] = [];
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    for (const text of pages) {
      doc.addPage();
      doc.fontSize(12).text(text);
    }
    doc.end();
  });
}

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const para = (text: string, style?: string) => `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}<w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;

/** A small DOCX made here: the parts Word needs for a document of paragraphs (`filler` pads its XML). */
async function docx(paragraphs: string, filler = ''): Promise<Buffer> {
  const zip = new JSZip();
  zip.file('[Content_Types].xml', '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    + '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
    + '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>');
  zip.file('_rels/.rels', '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    + '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>');
  zip.file('word/document.xml', `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${W}"><w:body>${paragraphs}${filler}</w:body></w:document>`);
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

/** POSTs a file as multipart/form-data, as a browser form does. */
async function upload(token: string, kbId: string, name: string, bytes: Buffer, type = 'application/octet-stream', fields: Record<string, string> = {}) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)], { type }), name);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(`${svc.url}${REST}/knowledge-bases/${kbId}/files`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, text };
}

async function readyFile(api: Api, kbId: string, fileId: string): Promise<Record<string, any>> {
  return eventually(async () => {
    const file = (await api.get(`${REST}/knowledge-bases/${kbId}/files/${fileId}`)).body;
    return ['ready', 'failed'].includes(file.status) && file;
  }, 60_000);
}

/** An organization with an agent answering from a new knowledge base. */
async function agentWithKb() {
  const { api, token, orgId } = await newOrg(svc);
  const agent = await newAgent(api, 'Pizzeria');
  const kb = (await api.post(`${REST}/knowledge-bases`, { name: 'Documents' })).body;
  expect((await api.post(`${REST}/knowledge-bases/${kb.id}/agents`, { agent_id: agent.id })).status).toBe(200);
  return { api, token, orgId, agent, kb };
}

/** Asks the agent through its public widget, as a visitor: the agent's reply text. */
async function ask(publicKey: string, question: string): Promise<string> {
  const pub = client(svc.url);
  const base = `/api/v1/public/widgets/${publicKey}/conversations`;
  const started = await pub.post(base, { page_url: 'https://example.com/' });
  expect(started.status, started.text).toBe(201);
  const sent = await pub.post(`${base}/${started.body.conversation_id}/messages`, { text: question }, { 'x-visitor-token': started.body.visitor_token });
  expect(sent.status, sent.text).toBe(200);
  return (sent.body.messages as { role: string; text: string }[]).filter((m) => m.role === 'agent').map((m) => m.text).join('\n');
}

describe('files in knowledge bases', () => {
  it('a PDF is read by its workflow, page by page, and replies cite it by name and page', async () => {
    const { api, token, agent, kb } = await agentWithKb();
    const bytes = await pdf([
      'Welcome to Trattoria Verdi. This price list is valid from March.',
      'A large margherita pizza costs 14 dollars. A small margherita pizza costs 9 dollars.',
    ]);
    const res = await upload(token, kb.id, 'Price list.pdf', bytes, 'application/pdf');
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('location')).toBe(`${REST}/knowledge-bases/${kb.id}/files/${res.body.id}`);
    expect(res.body).toMatchObject({ kb_id: kb.id, name: 'Price list.pdf', kind: 'pdf', content_type: 'application/pdf', size_bytes: bytes.length,
      revision: 1, status: 'processing', error: null, pages: null, chunks: 0 });

    const run = svc.temporal.workflow.getHandle(workflowIds.knowledgeFileParse(res.body.id, 1));
    expect(await run.result()).toBe('ready');
    const file = await readyFile(api, kb.id, res.body.id);
    expect(file).toMatchObject({ status: 'ready', pages: 2, error: null });
    expect(file.chunks).toBeGreaterThanOrEqual(2);

    const reply = await ask(agent.public_key, 'How much is a large margherita pizza?');
    expect(reply).toContain('14 dollars');
    expect(reply).toContain('(Price list, page 2)');

    // The files' source is no website: it is neither listed nor reachable among the sites.
    expect((await api.get(`${REST}/sites?kb_id=${kb.id}`)).body.total).toBe(0);
    const list = await api.get(`${REST}/knowledge-bases/${kb.id}/files`);
    expect(list.body).toMatchObject({ total: 1, limit: 50, offset: 0 });
    expect(list.body.data[0].id).toBe(res.body.id);

    await replayAll([{ workflowId: run.workflowId, history: await run.fetchHistory() }]);
    await recordFixture(run.workflowId, 'parse-knowledge-file.json');
  });

  it('DOCX, Markdown, plain text, HTML and CSV each become passages cited by heading or rows', async () => {
    const { api, token, agent, kb } = await agentWithKb();
    const cases: { name: string; bytes: Buffer; kind: string; question: string; answer: string; cite: string }[] = [
      {
        name: 'Handbook.docx', kind: 'docx',
        bytes: await docx(para('Returns', 'Heading1') + para('Unopened bottles of olive oil can be returned within 30 days for a refund.')
          + para('Deliveries', 'Heading1') + para('We deliver to the harbour district every Thursday afternoon.')),
        question: 'Can I return unopened olive oil?', answer: '30 days', cite: '(Handbook, Returns)',
      },
      {
        name: 'catering.md', kind: 'markdown',
        bytes: Buffer.from('# Catering\n\nWe cater weddings for up to 120 guests.\n\n# Parking\n\nGuests park free of charge in the courtyard behind the kitchen.\n'),
        question: 'Where can guests park?', answer: 'courtyard', cite: '(catering, Parking)',
      },
      {
        name: 'allergens.txt', kind: 'text',
        bytes: Buffer.from('Our tiramisu contains eggs, mascarpone and a little coffee liqueur.\n'),
        question: 'What does the tiramisu contain?', answer: 'mascarpone', cite: '(allergens)',
      },
      {
        name: 'hours.html', kind: 'html',
        bytes: Buffer.from('<!doctype html><html><head><title>Hours</title></head><body><h1>Opening hours</h1>'
          + '<p>The trattoria opens at noon from Tuesday to Sunday and stays closed on Mondays.</p></body></html>'),
        question: 'Are you open on Mondays?', answer: 'Mondays', cite: '(hours, Opening hours)',
      },
      {
        name: 'Wines.csv', kind: 'csv',
        bytes: Buffer.from('wine,region,bottle price\nBarolo,Piedmont,58 dollars\nChianti Classico,Tuscany,34 dollars\n'),
        question: 'How much is a bottle of Barolo?', answer: '58 dollars', cite: '(Wines, rows 1-2)',
      },
    ];
    for (const c of cases) {
      const res = await upload(token, kb.id, c.name, c.bytes);
      expect(res.status, `${c.name}: ${res.text}`).toBe(201);
      expect(res.body.kind, c.name).toBe(c.kind);
      const file = await readyFile(api, kb.id, res.body.id);
      expect(file.status, `${c.name}: ${file.error}`).toBe('ready');
    }
    for (const c of cases) {
      const reply = await ask(agent.public_key, c.question);
      expect(reply, c.name).toContain(c.answer);
      expect(reply, c.name).toContain(c.cite);
    }
  });

  it('the kind is read from the bytes: a PDF named .txt is a PDF, an image named .pdf is refused', async () => {
    const { token, kb } = await agentWithKb();
    const renamed = await upload(token, kb.id, 'notes.txt', await pdf(['Nothing but a PDF.']), 'text/plain');
    expect(renamed.status, renamed.text).toBe(201);
    expect(renamed.body.kind).toBe('pdf');
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    const image = await upload(token, kb.id, 'menu.pdf', png, 'application/pdf');
    expect(image.status).toBe(415);
    expect(expectWellFormedProblem(image).code).toBe('unsupported_file_type');
  });

  it('bad files get a clear 4xx and store nothing', async () => {
    const { api, token, kb } = await agentWithKb();
    const encrypted = await pdf(['Secret prices.'], { userPassword: 'open sesame', ownerPassword: 'owner' });
    const ownerOnly = await pdf(['Do not copy.'], { ownerPassword: 'owner', permissions: { copying: false } });
    const corrupt = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from('this is no PDF body at all\n'.repeat(20))]);
    // A DOCX whose document unpacks to 40 MB of spaces from a few dozen kilobytes.
    const bomb = await docx(para('Hello'), ' '.repeat(40 * 1024 * 1024));
    const notDocx = await new JSZip().file('readme.txt', 'hello').generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
    const brokenDocx = Buffer.from((await docx(para('Hello'))).subarray(0, 200));
    const cases: [string, Buffer, number, string][] = [
      ['locked.pdf', encrypted, 422, 'encrypted_file'],
      ['owner.pdf', ownerOnly, 422, 'encrypted_file'],
      ['broken.pdf', corrupt, 422, 'unreadable_file'],
      ['bomb.docx', bomb, 422, 'unsafe_file'],
      ['archive.docx', notDocx, 415, 'unsupported_file_type'],
      ['cut.docx', brokenDocx, 422, 'unreadable_file'],
      ['huge.txt', Buffer.alloc(20 * 1024 * 1024 + 1, 'a'), 413, 'file_too_large'],
      ['empty.txt', Buffer.alloc(0), 422, 'unreadable_file'],
    ];
    for (const [name, bytes, status, code] of cases) {
      const res = await upload(token, kb.id, name, bytes);
      expect(res.status, `${name}: ${res.text}`).toBe(status);
      expect(expectWellFormedProblem(res, name).code, name).toBe(code);
    }
    // Malformed requests: no file part, a JSON body with bad base64.
    const form = new FormData();
    form.append('name', 'x.txt');
    const noFile = await fetch(`${svc.url}${REST}/knowledge-bases/${kb.id}/files`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    expect(noFile.status).toBe(400);
    const badJson = await api.post(`${REST}/knowledge-bases/${kb.id}/files`, { name: 'x.txt', content_base64: '***' });
    expect(badJson.status).toBe(400);
    expect(badJson.body.errors[0].field).toBe('content_base64');

    expect((await api.get(`${REST}/knowledge-bases/${kb.id}/files`)).body.total).toBe(0);
    expect((await svc.sql`select 1 from knowledge_files where kb_id = ${kb.id}`).length).toBe(0);
  });

  it('the same name again replaces the file\'s passages at once; delete removes them; another organization sees nothing', async () => {
    const { api, token, agent, kb } = await agentWithKb();
    const first = await upload(token, kb.id, 'Specials.md', Buffer.from('# Specials\n\nThe soup of the day is minestrone with borlotti beans.\n'));
    expect(first.status, first.text).toBe(201);
    await readyFile(api, kb.id, first.body.id);
    expect(await ask(agent.public_key, 'What is the soup of the day?')).toContain('minestrone');

    // As JSON (what an MCP client sends): the same name is a new revision of the same file.
    const second = await api.post(`${REST}/knowledge-bases/${kb.id}/files`, {
      name: 'Specials.md', content_base64: Buffer.from('# Specials\n\nThe soup of the day is ribollita, a Tuscan bread soup.\n').toString('base64'),
    });
    expect(second.status, second.text).toBe(200);
    expect(second.body).toMatchObject({ id: first.body.id, revision: 2, status: 'processing' });
    expect(await svc.temporal.workflow.getHandle(workflowIds.knowledgeFileParse(first.body.id, 2)).result()).toBe('ready');
    const reply = await ask(agent.public_key, 'What is the soup of the day?');
    expect(reply).toContain('ribollita');
    expect(reply).not.toContain('minestrone');
    const pages = await svc.sql<{ body: string }[]>`select body from site_pages where file_id = ${first.body.id}`;
    expect(pages.map((p) => p.body).join(' ')).not.toContain('minestrone');

    const other = await newOrg(svc);
    expect((await other.api.get(`${REST}/knowledge-bases/${kb.id}/files/${first.body.id}`)).status).toBe(404);
    expect((await other.api.delete(`${REST}/knowledge-bases/${kb.id}/files/${first.body.id}`)).status).toBe(404);
    expect((await upload(other.token, kb.id, 'x.txt', Buffer.from('hello there'))).status).toBe(404);

    expect((await api.delete(`${REST}/knowledge-bases/${kb.id}/files/${first.body.id}`)).status).toBe(204);
    expect((await api.get(`${REST}/knowledge-bases/${kb.id}/files/${first.body.id}`)).status).toBe(404);
    expect((await svc.sql`select 1 from site_pages where file_id = ${first.body.id}`).length).toBe(0);
    expect(await ask(agent.public_key, 'What is the soup of the day?')).not.toContain('ribollita');
  });

  it('files go with their knowledge base, and with the agent deleted with delete_kbs', async () => {
    const { api, token, agent, kb } = await agentWithKb();
    const a = await upload(token, kb.id, 'a.txt', Buffer.from('The terrace seats forty guests in summer.'));
    await readyFile(api, kb.id, a.body.id);
    const blob = (await svc.sql<{ blob_key: string }[]>`select blob_key from knowledge_files where id = ${a.body.id}`)[0]!.blob_key;
    const { blobStoreOf } = await import('../src/storage/store.ts');
    const store = blobStoreOf(svc.config);
    expect(await store.get(blob)).not.toBeNull();
    expect((await api.delete(`${REST}/knowledge-bases/${kb.id}`)).status).toBe(204);
    expect((await svc.sql`select 1 from knowledge_files where id = ${a.body.id}`).length).toBe(0);
    expect(await store.get(blob)).toBeNull();

    const kb2 = (await api.post(`${REST}/knowledge-bases`, { name: 'Only this agent' })).body;
    await api.post(`${REST}/knowledge-bases/${kb2.id}/agents`, { agent_id: agent.id });
    const b = await upload(token, kb2.id, 'b.txt', Buffer.from('The cellar holds four hundred bottles.'));
    await readyFile(api, kb2.id, b.body.id);
    const blob2 = (await svc.sql<{ blob_key: string }[]>`select blob_key from knowledge_files where id = ${b.body.id}`)[0]!.blob_key;
    expect((await api.delete(`${REST}/agents/${agent.id}?delete_kbs=true`)).status).toBe(204);
    expect((await svc.sql`select 1 from knowledge_files where id = ${b.body.id}`).length).toBe(0);
    await eventually(async () => (await store.get(blob2)) === null);
  });
});
