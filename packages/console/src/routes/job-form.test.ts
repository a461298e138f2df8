import { emptyJobForm } from '../views/jobs.ts';
import { formErrors, toCreateBody } from './job-form.ts';

describe('job form', () => {
  it('builds the POST /jobs body, leaving out empty query rows and keeping the rows they came from', () => {
    const v = emptyJobForm();
    v.name = 'Shop';
    v.source = 'https://shop.test/p/[1-3]';
    v.rateLimit = '30';
    v.queries[1] = { name: 'title', type: 'css', query: 'h1', join: false };
    v.queries[2] = { name: 'body', type: 'xpath', query: '//p', join: true };
    v.schedule = true;
    v.minutes = '0, 30';
    v.hours = '';
    v.days = '1,x';
    v.timezone = 'Europe/Paris';
    const { body, rows } = toCreateBody(v);
    expect(body).toEqual({
      name: 'Shop',
      source: 'https://shop.test/p/[1-3]',
      rate_limit: 30,
      queries: [
        { name: 'title', type: 'css', query: 'h1', join: false },
        { name: 'body', type: 'xpath', query: '//p', join: true },
      ],
      scheduling: { minutes: [0, 30], days: [1, 'x'], timezone: 'Europe/Paris' },
      render_config: null,
    });
    expect(rows).toEqual([1, 2]);
  });

  it('leaves rate_limit to its default when empty, and sends scheduling null when unticked', () => {
    const { body } = toCreateBody({ ...emptyJobForm(), rateLimit: '' });
    expect(body).not.toHaveProperty('rate_limit');
    expect(body.scheduling).toBeNull();
  });

  it('names the form row of a query error', () => {
    expect(
      formErrors({ 'queries[0].query': 'invalid css', name: 'required', queries: 'too few' }, [2]),
    ).toEqual({
      'query row 3: query': 'invalid css',
      name: 'required',
      queries: 'too few',
    });
  });
});
