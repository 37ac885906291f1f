"""A stateful local fake of the GitHub REST endpoints the bot uses, served by
pytest-httpserver on 127.0.0.1: repositories (forks included), pull requests
(open or closed, heads in another repository), issue comments with Link-header
pagination, reactions, collaborator permission, an injectable rate-limit
response, and *tokens*: each token acts as one identity with read or write
access, as GitHub grants them -- a `pull_request` run from a fork and a
Dependabot-triggered run get a read-only token, whatever `permissions:` says;
installation tokens (GITHUB_TOKEN, a GitHub App's) may not ask `GET /user`.
Writes with a read-only token get GitHub's 403. Repository settings that change
GitHub's answers are modelled too: the default branch (the API's, since a `schedule`
payload has no `repository` object), the setting that lets GitHub Actions create pull
requests (off: GITHUB_TOKEN's POST /pulls gets GitHub's 403), and branch protection's
required status checks (commit statuses per SHA; a merge is refused while a required
context is missing or not successful). Git references and releases, with their assets, are
in a mixin of their own (fake_releases.py)."""

from __future__ import annotations

import copy
import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from werkzeug import Request, Response

from .fake_refs import RefRoutes
from .fake_releases import ReleasesMixin

LIMIT = 65_536
ACTIONS = "github-actions[bot]"
#: what GitHub answers GITHUB_TOKEN's POST /pulls while the repository (or its organisation)
#: does not allow GitHub Actions to create and approve pull requests
ACTIONS_MAY_NOT_OPEN = "GitHub Actions is not permitted to create or approve pull requests."


@dataclass(frozen=True)
class Token:
    login: str = ACTIONS
    write: bool = True
    installation: bool = True  # GET /user answers 403 "Resource not accessible by integration"
    type: str = "Bot"


@dataclass
class Comment:
    id: int
    body: str
    login: str
    type: str = "User"
    reactions: list[tuple[str, str]] = field(default_factory=list)  # (content, login)
    reaction_ids: list[int] = field(default_factory=list)


@dataclass
class FakeRepo:
    full_name: str
    permissions: dict[str, str] = field(default_factory=dict)
    pulls: dict[int, dict] = field(default_factory=dict)
    comments: dict[int, list[Comment]] = field(default_factory=dict)
    default_branch: str = "main"
    branches: set[str] = field(default_factory=lambda: {"main"})  # what a pull may target
    actions_may_create_pulls: bool = True  # Settings > Actions > General > Workflow permissions
    statuses: dict[str, dict[str, dict]] = field(default_factory=dict)  # sha -> context -> status
    required: list[str] = field(default_factory=list)  # branch protection's required checks
    merged: list[int] = field(default_factory=list)
    git_dir: Path | None = None  # the real bare repository its refs are read from (fake_refs)


class FakeGitHub(ReleasesMixin, RefRoutes):  # releases: fake_releases.py; refs: fake_refs.py
    def __init__(self, server) -> None:
        self.server = server
        self.base = server.url_for("").rstrip("/")
        self.repos: dict[str, FakeRepo] = {}
        self.tokens: dict[str, Token] = {"t0ken": Token(), "fake-token": Token(),
                                         "read-token": Token(write=False),
                                         "app-token": Token("opsweep-app[bot]")}
        self.log: list[tuple[str, str]] = []
        self.writes: list[tuple[str, str, str]] = []  # (method, path, login) of accepted writes
        self.refused: list[tuple[str, str]] = []  # writes refused for a read-only token
        self.rate_limited = 0  # answer this many next requests with a rate-limit response
        self._ids = itertools.count(1000)
        self._lock = threading.Lock()
        self._init_releases()
        server.expect_request(re.compile(".*")).respond_with_handler(self.handle)

    # --- state helpers used by tests ---------------------------------------------
    def state(self) -> dict:
        """A copy of what the fake holds that its requests changed (repositories, accepted
        writes, the next id), for `take_state` of another fake: a run's result shared by
        tests that each go on from it alone."""
        return copy.deepcopy({"repos": self.repos, "writes": self.writes,
                              "next_id": next(self._ids)})

    def take_state(self, state: dict) -> None:
        """`state` (another fake's `state()`) as this fake's own, copied again; branch
        protection's `required` of repositories it already has is kept (no request reads
        it: only `merge_blocked`)."""
        required = {name: repo.required for name, repo in self.repos.items()}
        self.repos = copy.deepcopy(state["repos"])
        for name, kept in required.items():
            self.repo(name).required = kept
        self.writes = list(state["writes"])
        self._ids = itertools.count(state["next_id"])

    def repo(self, full_name: str) -> FakeRepo:
        return self.repos.setdefault(full_name, FakeRepo(full_name))

    def add_pull(self, full_name: str, number: int, *, head_repo: str | None = None,
                 ref: str = "feature", sha: str = "0" * 40, state: str = "open",
                 user: str = "author", title: str = "", base_sha: str = "1" * 40,
                 base: str = "main") -> dict:
        pull = {"ref": ref, "sha": sha, "head_repo": head_repo or full_name, "state": state,
                "user": user, "title": title or f"PR {number}", "body": "", "base_sha": base_sha,
                "base": base}
        self.repo(full_name).pulls[number] = pull
        self.repo(pull["head_repo"])
        self.repo(full_name).comments.setdefault(number, [])
        return pull

    def add_comment(self, full_name: str, number: int, body: str, login: str,
                    type: str = "User") -> Comment:
        comment = Comment(next(self._ids), body, login, type)
        self.repo(full_name).comments.setdefault(number, []).append(comment)
        return comment

    def comments(self, full_name: str, number: int) -> list[Comment]:
        return self.repo(full_name).comments.get(number, [])

    def merge_blocked(self, full_name: str, number: int) -> list[str]:
        """Branch protection's verdict on a pull request's head: one line per required
        context that is missing or not successful ([] = it may merge)."""
        r = self.repo(full_name)
        have = r.statuses.get(r.pulls[number]["sha"], {})
        return [f'Required status check "{c}" is ' + ("expected." if c not in have else "failing.")
                for c in r.required if have.get(c, {}).get("state") != "success"]

    # --- JSON shapes ---------------------------------------------------------------
    def _user(self, login: str, type: str = "User") -> dict:
        return {"login": login, "id": abs(hash(login)) % 10**6, "type": type,
                "url": f"{self.base}/users/{login}"}

    def _repo_json(self, r: FakeRepo) -> dict:
        owner, name = r.full_name.split("/")
        return {"id": abs(hash(r.full_name)) % 10**6, "name": name, "full_name": r.full_name,
                "owner": self._user(owner), "url": f"{self.base}/repos/{r.full_name}",
                "private": False, "default_branch": r.default_branch}

    def _comment_json(self, r: FakeRepo, c: Comment) -> dict:
        url = f"{self.base}/repos/{r.full_name}/issues/comments/{c.id}"
        number = next((n for n, cs in r.comments.items() if c in cs), 0)
        return {"id": c.id, "body": c.body, "user": self._user(c.login, c.type), "url": url,
                "html_url": url, "created_at": "2026-11-29T00:00:00Z",
                "issue_url": f"{self.base}/repos/{r.full_name}/issues/{number}",
                "updated_at": "2026-11-29T00:00:00Z"}

    def _issue_json(self, r: FakeRepo, number: int) -> dict:
        url = f"{self.base}/repos/{r.full_name}/issues/{number}"
        state = r.pulls[number]["state"] if number in r.pulls else "open"
        data = {"number": number, "id": number, "url": url, "comments_url": f"{url}/comments",
                "title": f"PR {number}", "state": state, "user": self._user("author")}
        if number in r.pulls:
            data["pull_request"] = {"url": f"{self.base}/repos/{r.full_name}/pulls/{number}"}
        return data

    def _pull_json(self, r: FakeRepo, number: int) -> dict:
        p = r.pulls[number]
        head_repo = self._repo_json(self.repo(p["head_repo"]))
        owner = p["head_repo"].split("/")[0]
        return {"number": number, "id": number, "state": p["state"], "title": p["title"],
                "body": p["body"], "user": self._user(p["user"]),
                "url": f"{self.base}/repos/{r.full_name}/pulls/{number}",
                "html_url": f"{self.base}/{r.full_name}/pull/{number}",
                "head": {"ref": p["ref"], "sha": p["sha"], "repo": head_repo,
                         "label": f"{owner}:{p['ref']}"},
                "base": {"ref": p["base"], "sha": p["base_sha"], "repo": self._repo_json(r),
                         "label": f"{r.full_name.split('/')[0]}:{p['base']}"}}

    # --- dispatch --------------------------------------------------------------------
    def _token(self, request: Request) -> Token | None:
        auth = request.headers.get("Authorization", "")
        return self.tokens.get(auth.split(" ", 1)[1]) if " " in auth else None

    def handle(self, request: Request) -> Response:
        with self._lock:
            self.log.append((request.method, request.full_path))
            if self.rate_limited:
                self.rate_limited -= 1
                return Response(json.dumps({"message": "You have exceeded a secondary rate limit"}),
                                status=403, content_type="application/json",
                                headers={"Retry-After": "1", "X-RateLimit-Remaining": "0"})
            token = self._token(request)
            if token is None:
                return self._json({"message": "Bad credentials"}, 401)
            if request.method != "GET" and not token.write:
                self.refused.append((request.method, request.path))
                return self._json({"message": "Resource not accessible by integration"}, 403)
            response = self._route(request, token)
            if request.method != "GET" and response.status_code < 400:
                self.writes.append((request.method, request.path, token.login))
            return response

    def _json(self, data, status: int = 200, headers: dict | None = None) -> Response:
        return Response(json.dumps(data), status=status, content_type="application/json",
                        headers=headers or {})

    def _route(self, request: Request, token: Token) -> Response:
        path, method = request.path, request.method
        if path == "/user":
            if token.installation:
                return self._json({"message": "Resource not accessible by integration"}, 403)
            return self._json(self._user(token.login, token.type))
        m = re.fullmatch(r"/repos/([^/]+/[^/]+)(/.*)?", path)
        if not m or m.group(1) not in self.repos:
            return self._json({"message": "Not Found"}, 404)
        r, rest = self.repos[m.group(1)], m.group(2) or ""
        body = json.loads(request.get_data() or b"{}") if method in ("POST", "PATCH") \
            and request.mimetype in ("", "application/json") else {}  # not an upload's bytes
        if rest == "" and method == "GET":
            return self._json(self._repo_json(r))
        for pattern, handler in self._routes():
            mm = re.fullmatch(pattern, rest)
            if mm:
                return handler(request, r, mm, body, token)
        return self._json({"message": f"fake has no route for {method} {path}"}, 404)

    def _routes(self):
        return [(r"/pulls", self._pulls), (r"/pulls/(\d+)", self._pull),
                (r"/issues/(\d+)", self._issue), (r"/issues/(\d+)/comments", self._issue_comments),
                (r"/issues/comments/(\d+)", self._comment),
                (r"/issues/comments/(\d+)/reactions(?:/(\d+))?", self._reactions),
                (r"/collaborators/([^/]+)/permission", self._permission),
                (r"/statuses/([0-9a-f]{40})", self._status),
                (r"/commits/([^/]+)/status", self._combined),
                (r"/commits/([0-9a-f]{40})", self._commit),
                (r"/pulls/(\d+)/merge", self._merge), *self.ref_routes(),
                *self._release_routes()]

    def _status(self, request, r, mm, body, token):
        state = body.get("state")
        if request.method != "POST" or state not in ("error", "failure", "pending", "success"):
            return self._json({"message": "Validation Failed"}, 422)
        status = {"state": state, "context": body.get("context", "default"),
                  "description": body.get("description", ""),
                  "target_url": body.get("target_url", ""), "creator": self._user(token.login),
                  "id": next(self._ids), "url": f"{self.base}/repos/{r.full_name}/statuses/x"}
        r.statuses.setdefault(mm.group(1), {})[status["context"]] = status
        return self._json(status, 201)

    def _commit(self, request, r, mm, body, token):
        sha = mm.group(1)
        return self._json({"sha": sha, "url": f"{self.base}/repos/{r.full_name}/commits/{sha}",
                           "commit": {"message": ""}, "parents": []})

    def _combined(self, request, r, mm, body, token):
        statuses = list(r.statuses.get(mm.group(1), {}).values())
        states = {s["state"] for s in statuses}
        state = "failure" if states & {"failure", "error"} else \
            "pending" if "pending" in states or not states else "success"
        return self._json({"state": state, "sha": mm.group(1), "statuses": statuses,
                           "total_count": len(statuses)})

    def _merge(self, request, r, mm, body, token):
        number = int(mm.group(1))
        blocked = self.merge_blocked(r.full_name, number)
        if blocked:
            return self._json({"message": blocked[0]}, 405)
        r.merged.append(number)
        r.pulls[number]["state"] = "closed"
        return self._json({"merged": True, "sha": r.pulls[number]["sha"], "message": "merged"})

    def _pulls(self, request, r, mm, body, token):
        if request.method == "POST":
            if token.login == ACTIONS and not r.actions_may_create_pulls:
                return self._json({"message": ACTIONS_MAY_NOT_OPEN, "documentation_url":
                                   "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
                                   "status": "403"}, 403)
            if body.get("base") not in r.branches or not body.get("head"):
                return self._json({"message": "Validation Failed", "errors": [
                    {"resource": "PullRequest", "field": "base" if body.get("head") else "head",
                     "code": "invalid"}], "status": "422"}, 422)
            number = max([*r.pulls, *r.comments, 0]) + 1
            head = body["head"].split(":")[-1]
            self.add_pull(r.full_name, number, ref=head, title=body.get("title", ""),
                          user=token.login, base=body["base"])
            r.pulls[number]["body"] = body.get("body", "")
            return self._json(self._pull_json(r, number), 201)
        query = parse_qs(urlparse(request.url).query)
        state = query.get("state", ["open"])[0]
        head = query.get("head", [""])[0]
        numbers = [n for n, p in sorted(r.pulls.items())
                   if state in ("all", p["state"])
                   and (not head or head == f"{p['head_repo'].split('/')[0]}:{p['ref']}")]
        return self._page(request, [self._pull_json(r, n) for n in numbers])

    def _pull(self, request, r, mm, body, token):
        number = int(mm.group(1))
        if number not in r.pulls:
            return self._json({"message": "Not Found"}, 404)
        if request.method == "PATCH":
            for key in ("title", "body", "state"):
                if key in body:
                    r.pulls[number][key] = body[key]
        return self._json(self._pull_json(r, number))

    def _issue(self, request, r, mm, body, token):
        return self._json(self._issue_json(r, int(mm.group(1))))

    def _issue_comments(self, request, r, mm, body, token):
        number = int(mm.group(1))
        if request.method == "POST":
            if len(body.get("body", "")) > LIMIT:
                return self._json({"message": "Validation Failed", "errors": [
                    {"message": "body is too long (maximum is 65536 characters)"}]}, 422)
            c = self.add_comment(r.full_name, number, body["body"], token.login, token.type)
            return self._json(self._comment_json(r, c), 201)
        return self._page(request, [self._comment_json(r, c)
                                    for c in self.comments(r.full_name, number)])

    def _find(self, r, comment_id):
        found = [c for cs in r.comments.values() for c in cs if c.id == comment_id]
        return found[0] if found else None

    def _comment(self, request, r, mm, body, token):
        c = self._find(r, int(mm.group(1)))
        if c is None:
            return self._json({"message": "Not Found"}, 404)
        if request.method == "PATCH":
            if c.login != token.login:
                return self._json({"message": "Must have admin rights to Repository."}, 403)
            if len(body.get("body", "")) > LIMIT:
                return self._json({"message": "Validation Failed"}, 422)
            c.body = body["body"]
        elif request.method == "DELETE":
            for cs in r.comments.values():
                if c in cs:
                    cs.remove(c)
            return Response(status=204)
        return self._json(self._comment_json(r, c))

    def _reactions(self, request, r, mm, body, token):
        c = self._find(r, int(mm.group(1)))
        if c is None:
            return self._json({"message": "Not Found"}, 404)
        if request.method == "POST":
            rid = next(self._ids)
            c.reactions.append((body["content"], token.login))
            c.reaction_ids.append(rid)
            return self._json({"id": rid, "content": body["content"],
                               "user": self._user(token.login, token.type)}, 201)
        if request.method == "DELETE":
            rid = int(mm.group(2))
            if rid in c.reaction_ids:
                i = c.reaction_ids.index(rid)
                del c.reaction_ids[i], c.reactions[i]
            return Response(status=204)
        return self._page(request, [{"id": rid, "content": content,
                                     "user": self._user(login, "Bot" if "[bot]" in login else "User")}
                                    for rid, (content, login) in zip(c.reaction_ids, c.reactions)])

    def _permission(self, request, r, mm, body, token):
        login = mm.group(1)
        if login not in r.permissions:
            return self._json({"message": f"{login} is not a user"}, 404)
        return self._json({"permission": r.permissions[login], "user": self._user(login)})

    def _page(self, request: Request, items: list[dict]) -> Response:
        query = parse_qs(urlparse(request.url).query)
        per_page = int(query.get("per_page", ["30"])[0])
        page = int(query.get("page", ["1"])[0])
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page: page * per_page]
        links = []
        kept = "&".join(f"{k}={v[0]}" for k, v in query.items() if k not in ("page", "per_page"))
        url = f"{self.base}{request.path}?per_page={per_page}" + (f"&{kept}" if kept else "")
        if page < last:
            links.append(f'<{url}&page={page + 1}>; rel="next"')
            links.append(f'<{url}&page={last}>; rel="last"')
        if page > 1:
            links.append(f'<{url}&page=1>; rel="first"')
            links.append(f'<{url}&page={page - 1}>; rel="prev"')
        return self._json(chunk, headers={"Link": ", ".join(links)} if links else {})


def display_title(workflow_file, event: dict, default: str) -> str:
    """A run's `display_title`, as GitHub puts it in the `workflow_run` payload: the
    workflow's `run-name` with its `${{ github.event.* }}` fields taken from the triggering
    event, or the event's own title (`default`) when the workflow has no run-name."""
    import yaml
    with open(workflow_file, encoding="utf-8") as handle:
        template = yaml.safe_load(handle).get("run-name")
    if not template:
        return default

    def field(match: re.Match) -> str:
        value: object = {"github": {"event": event}}
        for part in match.group(1).split("."):
            value = value.get(part, "") if isinstance(value, dict) else ""
        return str(value)
    return re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", field, template)


def read_outputs(text: str) -> dict[str, str]:
    """A step's $GITHUB_OUTPUT file read as the runner reads it: `key=value` lines and
    `key<<DELIMITER` blocks, later keys winning; a line that is neither is the runner's
    "Invalid format" error."""
    lines, values, i = text.split("\n"), {}, 0
    while i < len(lines):
        line, i = lines[i], i + 1
        if not line:
            continue
        eq, heredoc = line.find("="), line.find("<<")
        if eq > 0 and (heredoc < 0 or eq < heredoc):
            values[line[:eq]] = line[eq + 1:]
            continue
        if heredoc <= 0:
            raise ValueError(f"Invalid format {line!r}")
        key, delimiter = line[:heredoc], line[heredoc + 2:]
        end = lines.index(delimiter, i)  # ValueError: an unclosed block
        values[key], i = "\n".join(lines[i:end]), end + 1
    return values
