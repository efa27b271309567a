import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, startTestService, type TestService } from './helpers.ts';
import { orgWithAgent } from './support/orgs.ts';
import { expectFieldError } from './support/problems.ts';

let svc: TestService;
beforeAll(async () => { svc = await startTestService({}, { worker: false }); });
afterAll(async () => { await svc?.stop(); });

const REST = '/api/v1/rest';

describe('agent configuration fields', () => {
  it('GET returns every writable field under its PATCH name, with defaults or null', async () => {
    const { agent } = await orgWithAgent(svc);
    expect(agent).toMatchObject({
      guardrails: null, greeting: null, interruptions: 'allow', responsiveness: 'normal', voice_profile_id: null,
      default_language: null, additional_languages: null, timezone: null, prompt_modules: null,
      goals: null, data_schema: null, acceptance_criteria: null, tracking_rules: null,
      theme: { mode: 'auto', primary: '#2563EB', radius: 12 }, position: 'bottom_right', display_mode: 'floating',
      intro_title: null, intro_subtitle: null, suggested_prompts: [], localized_copy: {}, button_label: null, show_label: true,
      logo_url: null, launcher_icon_url: null, launcher_icon_kind: 'default', domains: [], mcp_pill_enabled: false, mcp_ui_cards_enabled: false,
      cross_channel_memory: false, notification_email: null, notification_phone: null, voicemail_behavior: 'leave_message',
      phone_settings: {}, config_variables: null, live_chat_alerts: false, live_chat_alert_scope: 'all', satisfaction_survey: false,
      model: null, has_pending_draft: false,
    });
  });

  it('PATCH sets every group at once and GET shows the same', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const patch = {
      name: 'Sales', persona: 'You sell boats.', voice: 'coral',
      guardrails: ['Never quote prices'], greeting: 'Ahoy!', interruptions: 'wait', responsiveness: 'quick',
      default_language: 'en', additional_languages: ['fr', 'pt-BR'], timezone: 'Europe/Paris',
      prompt_modules: [{ name: 'Tone', content: 'Be brief.' }],
      goals: ['Book a test sail'], data_schema: [{ name: 'boat_size', type: 'number', required: true }],
      acceptance_criteria: ['Greets the visitor'], tracking_rules: [{ name: 'pricing', condition: 'Visitor asks about price', enabled: false }],
      theme: { mode: 'dark', primary: '#112233', radius: 4 }, position: 'bottom_left', display_mode: 'inline',
      intro_title: 'Hi', intro_subtitle: 'Ask us', suggested_prompts: ['Prices?', 'Hours?'],
      button_label: 'Chat', show_label: false, logo_url: 'https://cdn.example.com/logo.png', launcher_icon_url: 'https://cdn.example.com/i.svg',
      launcher_icon_kind: 'custom', domains: ['example.com'], mcp_pill_enabled: true, mcp_ui_cards_enabled: true,
      cross_channel_memory: true, notification_email: 'ops@example.com', notification_phone: '+14155550123', voicemail_behavior: 'hang_up',
      phone_settings: { record_calls: true }, config_variables: { company: 'Boats Inc' }, live_chat_alerts: true, live_chat_alert_scope: 'unassigned',
      satisfaction_survey: true,
    };
    const res = await api.patch(`${REST}/agents/${agent.id}`, patch);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      ...patch,
      prompt_modules: [{ name: 'Tone', content: 'Be brief.', enabled: true }],
      data_schema: [{ name: 'boat_size', type: 'number', required: true, description: null }],
    });
    expect((await api.get(`${REST}/agents/${agent.id}`)).body).toEqual(res.body);
  });

  it('{} changes nothing and null clears a field back to its default or null', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const same = await api.patch(`${REST}/agents/${agent.id}`, {});
    expect(same.body).toEqual(agent);
    await api.patch(`${REST}/agents/${agent.id}`, { greeting: 'Hello', goals: ['x'], timezone: 'UTC', config_variables: { a: '1' } });
    const cleared = await api.patch(`${REST}/agents/${agent.id}`, { greeting: null, goals: null, timezone: null, config_variables: null });
    expect(cleared.body).toMatchObject({ greeting: null, goals: null, timezone: null, config_variables: null });
  });

  it('localized_copy merges per language; null removes one (rule 1)', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const path = `${REST}/agents/${agent.id}`;
    await api.patch(path, { localized_copy: { en: { intro_title: 'Hello', suggested_prompts: ['Prices?'] } } });
    let res = await api.patch(path, { localized_copy: { fr: { intro_title: 'Bonjour', intro_subtitle: 'Posez vos questions' } } });
    expect(res.body.localized_copy).toEqual({
      en: { intro_title: 'Hello', suggested_prompts: ['Prices?'] },
      fr: { intro_title: 'Bonjour', intro_subtitle: 'Posez vos questions' },
    });
    res = await api.patch(path, { localized_copy: { en: null } });
    expect(res.body.localized_copy).toEqual({ fr: { intro_title: 'Bonjour', intro_subtitle: 'Posez vos questions' } });
    expectFieldError(await api.patch(path, { localized_copy: { de: { intro_title: 'Hallo' } } }), 'localized_copy.de', 'unknown_field');
    expectFieldError(await api.patch(path, { localized_copy: { fr: { title: 'x' } } }), 'localized_copy.fr.title', 'unknown_field');
  });

  it('domains is a replace-set of normalized hosts, wildcards allowed (rule 2)', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const path = `${REST}/agents/${agent.id}`;
    let res = await api.patch(path, { domains: ['Example.com', 'https://www.example.com/pricing', 'example.com', '*.Shop.io', 'localhost:3000'] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.domains).toEqual(['example.com', 'www.example.com', '*.shop.io', 'localhost']);
    res = await api.patch(path, { domains: ['other.org'] });
    expect(res.body.domains).toEqual(['other.org']);
    expectFieldError(await api.patch(path, { domains: ['ok.com', 'not a host'] }), 'domains[1]', 'invalid_domain');
    expectFieldError(await api.patch(path, { domains: ['*.com'] }), 'domains[0]', 'invalid_domain');
    expect((await api.get(path)).body.domains).toEqual(['other.org']);
    res = await api.patch(path, { domains: [] });
    expect(res.body.domains).toEqual([]);
  });

  it('phone_settings merges key by key, null removes a key (rule 3)', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const path = `${REST}/agents/${agent.id}`;
    await api.patch(path, { phone_settings: { record_calls: true, max_call_minutes: 10 } });
    let res = await api.patch(path, { phone_settings: { max_call_minutes: 20, hold_music: 'jazz' } });
    expect(res.body.phone_settings).toEqual({ record_calls: true, max_call_minutes: 20, hold_music: 'jazz' });
    res = await api.patch(path, { phone_settings: { record_calls: null } });
    expect(res.body.phone_settings).toEqual({ max_call_minutes: 20, hold_music: 'jazz' });
    expectFieldError(await api.patch(path, { phone_settings: 'loud' }), 'phone_settings', 'invalid_type');
  });

  it('theme merges per key and checks each value', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const path = `${REST}/agents/${agent.id}`;
    const res = await api.patch(path, { theme: { primary: '#abc' } });
    expect(res.body.theme).toEqual({ mode: 'auto', primary: '#abc', radius: 12 });
    expectFieldError(await api.patch(path, { theme: { mode: 'neon' } }), 'theme.mode', 'invalid_value');
    expectFieldError(await api.patch(path, { theme: { primary: 'blue' } }), 'theme.primary', 'invalid_color');
    expectFieldError(await api.patch(path, { theme: { radius: 33 } }), 'theme.radius', 'out_of_range');
    expectFieldError(await api.patch(path, { theme: { radius: 2.5 } }), 'theme.radius', 'invalid_type');
  });

  it('logo_url and launcher_icon_url accept https only (rule 4)', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const path = `${REST}/agents/${agent.id}`;
    expect((await api.patch(path, { logo_url: 'https://cdn.example.com/a.png?v=2' })).status).toBe(200);
    expectFieldError(await api.patch(path, { logo_url: 'http://cdn.example.com/a.png' }), 'logo_url', 'https_required');
    expectFieldError(await api.patch(path, { launcher_icon_url: 'javascript:alert(1)' }), 'launcher_icon_url', 'https_required');
    expectFieldError(await api.patch(path, { launcher_icon_url: 'data:image/png;base64,AAAA' }), 'launcher_icon_url', 'https_required');
  });

  it('config variable names are identifiers and agent_name is reserved (rule 5)', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const path = `${REST}/agents/${agent.id}`;
    expect((await api.patch(path, { config_variables: { company: 'Boats', _x1: 'y' } })).body.config_variables).toEqual({ company: 'Boats', _x1: 'y' });
    expectFieldError(await api.patch(path, { config_variables: { agent_name: 'Bob' } }), 'config_variables.agent_name', 'reserved_name');
    expectFieldError(await api.patch(path, { config_variables: { '1abc': 'x' } }), 'config_variables.1abc', 'invalid_identifier');
    expectFieldError(await api.patch(path, { config_variables: { 'a-b': 'x' } }), 'config_variables.a-b', 'invalid_identifier');
    expectFieldError(await api.patch(path, { config_variables: { a: 5 } }), 'config_variables.a', 'invalid_type');
    // The whole set is replaced.
    expect((await api.patch(path, { config_variables: { only: '1' } })).body.config_variables).toEqual({ only: '1' });
  });

  it('value sets and formats are enforced with the field and a stable code', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const path = `${REST}/agents/${agent.id}`;
    const cases: [Record<string, unknown>, string, string][] = [
      [{ interruptions: 'sometimes' }, 'interruptions', 'invalid_value'],
      [{ responsiveness: 'slow' }, 'responsiveness', 'invalid_value'],
      [{ position: 'top_left' }, 'position', 'invalid_value'],
      [{ display_mode: 'popup' }, 'display_mode', 'invalid_value'],
      [{ launcher_icon_kind: 'emoji' }, 'launcher_icon_kind', 'invalid_value'],
      [{ voicemail_behavior: 'sing' }, 'voicemail_behavior', 'invalid_value'],
      [{ live_chat_alert_scope: 'nobody' }, 'live_chat_alert_scope', 'invalid_value'],
      [{ voice: 'robot' }, 'voice', 'invalid_value'],
      [{ status: 'draft' }, 'status', 'invalid_value'],
      [{ notification_phone: '4155550123' }, 'notification_phone', 'invalid_e164'],
      [{ notification_email: 'not-an-email' }, 'notification_email', 'invalid_email'],
      [{ default_language: 'English' }, 'default_language', 'invalid_language'],
      [{ additional_languages: ['fr', 'fr'] }, 'additional_languages', 'duplicate_items'],
      [{ timezone: 'Mars/Olympus' }, 'timezone', 'invalid_timezone'],
      [{ suggested_prompts: Array(9).fill('x') }, 'suggested_prompts', 'too_many_items'],
      [{ intro_title: 'x'.repeat(121) }, 'intro_title', 'too_long'],
      [{ data_schema: [{ name: 'a', type: 'string' }, { name: 'a', type: 'number' }] }, 'data_schema[1].name', 'duplicate_name'],
      [{ data_schema: [{ name: 'a b', type: 'string' }] }, 'data_schema[0].name', 'invalid_identifier'],
      [{ data_schema: [{ name: 'a', type: 'color' }] }, 'data_schema[0].type', 'invalid_value'],
      [{ tracking_rules: [{ name: 'x' }] }, 'tracking_rules[0].condition', 'required'],
      [{ voice_profile_id: '0190a0b0-0000-7000-8000-000000000000' }, 'voice_profile_id', 'unknown_voice_profile'],
      [{ show_label: 'yes' }, 'show_label', 'invalid_type'],
      [{ widget_id: 'x' }, 'widget_id', 'unknown_field'],
    ];
    for (const [body, field, code] of cases) expectFieldError(await api.patch(path, body), field, code);
    expect((await api.get(path)).body).toEqual(agent);
  });

  it('voice_profile_id must name a profile of the same organization', async () => {
    const { api, agent } = await orgWithAgent(svc);
    const other = await orgWithAgent(svc);
    const mine = await api.post(`${REST}/voice-profiles`, { name: 'Warm', base_voice: 'sage' });
    expect(mine.status, mine.text).toBe(201);
    const theirs = await other.api.post(`${REST}/voice-profiles`, { name: 'Theirs', base_voice: 'echo' });
    const path = `${REST}/agents/${agent.id}`;
    expectFieldError(await api.patch(path, { voice_profile_id: theirs.body.id }), 'voice_profile_id', 'unknown_voice_profile');
    const res = await api.patch(path, { voice_profile_id: mine.body.id });
    expect(res.status, res.text).toBe(200);
    expect(res.body.voice_profile_id).toBe(mine.body.id);
  });

  it('OpenAPI lists every writable field with its type and value set', async () => {
    const doc = (await client(svc.url).get('/api/v1/openapi.json')).body;
    const patch = doc.components.schemas.AgentPatch;
    const agent = doc.components.schemas.Agent;
    for (const field of ['guardrails', 'greeting', 'interruptions', 'responsiveness', 'voice_profile_id', 'default_language', 'additional_languages',
      'timezone', 'prompt_modules', 'goals', 'data_schema', 'acceptance_criteria', 'tracking_rules', 'theme', 'position', 'display_mode',
      'intro_title', 'intro_subtitle', 'suggested_prompts', 'localized_copy', 'button_label', 'show_label', 'logo_url', 'launcher_icon_url',
      'launcher_icon_kind', 'domains', 'mcp_pill_enabled', 'mcp_ui_cards_enabled', 'cross_channel_memory', 'notification_email',
      'notification_phone', 'voicemail_behavior', 'phone_settings', 'config_variables', 'live_chat_alerts', 'live_chat_alert_scope',
      'satisfaction_survey', 'model']) {
      expect(patch.properties[field], field).toBeDefined();
      expect(JSON.stringify(patch.properties[field]), field).toMatch(/"type"|"\$ref"|"enum"/);
      expect(agent.properties[field], field).toBeDefined();
    }
    expect(patch.properties.interruptions.enum).toEqual(['allow', 'wait']);
    expect(patch.properties.theme.properties.mode.enum).toEqual(['light', 'dark', 'auto']);
    expect(doc.paths['/api/v1/widgets/{id}'].patch).toBeDefined();
  });
});
