"""A stateful local fake of the GitHub REST endpoints the bot uses, served by
pytest-httpserver on 127.0.0.1: repositories, pull requests, issue comments
with Link-header pagination, reactions, collaborator permission, and an
injectable rate-limit response."""

from __future__ import annotations

import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlparse

from werkzeug import Request, Response

LIMIT = 65_536


@dataclass
class Comment:
    id: int
    body: str
    login: str
    type: str = "User"
    reactions: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class FakeRepo:
    full_name: str
    permissions: dict[str, str] = field(default_factory=dict)
    pulls: dict[int, dict] = field(default_factory=dict)
    comments: dict[int, list[Comment]] = field(default_factory=dict)


class FakeGitHub:
    def __init__(self, server) -> None:
        self.server = server
        self.base = server.url_for("").rstrip("/")
        self.repos: dict[str, FakeRepo] = {}
        self.log: list[tuple[str, str]] = []
        self.rate_limited = 0  # answer this many next requests with a rate-limit response
        self._ids = itertools.count(1000)
        self._lock = threading.Lock()
        server.expect_request(re.compile(".*")).respond_with_handler(self.handle)

    # --- state helpers used by tests ---------------------------------------------
    def repo(self, full_name: str) -> FakeRepo:
        return self.repos.setdefault(full_name, FakeRepo(full_name))

    def add_pull(self, full_name: str, number: int, *, head_repo: str | None = None,
                 ref: str = "feature", sha: str = "0" * 40) -> None:
        self.repo(full_name).pulls[number] = {"ref": ref, "sha": sha,
                                              "head_repo": head_repo or full_name}
        self.repo(full_name).comments.setdefault(number, [])

    def add_comment(self, full_name: str, number: int, body: str, login: str,
                    type: str = "User") -> Comment:
        comment = Comment(next(self._ids), body, login, type)
        self.repo(full_name).comments.setdefault(number, []).append(comment)
        return comment

    def comments(self, full_name: str, number: int) -> list[Comment]:
        return self.repo(full_name).comments.get(number, [])

    # --- JSON shapes ---------------------------------------------------------------
    def _user(self, login: str, type: str = "User") -> dict:
        return {"login": login, "id": abs(hash(login)) % 10**6, "type": type,
                "url": f"{self.base}/users/{login}"}

    def _repo_json(self, r: FakeRepo) -> dict:
        owner, name = r.full_name.split("/")
        return {"id": abs(hash(r.full_name)) % 10**6, "name": name, "full_name": r.full_name,
                "owner": self._user(owner), "url": f"{self.base}/repos/{r.full_name}",
                "private": False, "default_branch": "main"}

    def _comment_json(self, r: FakeRepo, c: Comment) -> dict:
        url = f"{self.base}/repos/{r.full_name}/issues/comments/{c.id}"
        return {"id": c.id, "body": c.body, "user": self._user(c.login, c.type), "url": url,
                "html_url": url, "created_at": "2026-11-29T00:00:00Z",
                "updated_at": "2026-11-29T00:00:00Z"}

    def _issue_json(self, r: FakeRepo, number: int) -> dict:
        url = f"{self.base}/repos/{r.full_name}/issues/{number}"
        data = {"number": number, "id": number, "url": url, "comments_url": f"{url}/comments",
                "title": f"PR {number}", "state": "open", "user": self._user("author")}
        if number in r.pulls:
            data["pull_request"] = {"url": f"{self.base}/repos/{r.full_name}/pulls/{number}"}
        return data

    def _pull_json(self, r: FakeRepo, number: int) -> dict:
        p = r.pulls[number]
        head_repo = self._repo_json(self.repo(p["head_repo"]))
        return {"number": number, "id": number, "url": f"{self.base}/repos/{r.full_name}/pulls/{number}",
                "state": "open", "head": {"ref": p["ref"], "sha": p["sha"], "repo": head_repo,
                                          "label": f"x:{p['ref']}"},
                "base": {"ref": "main", "sha": "1" * 40, "repo": self._repo_json(r), "label": "x:main"}}

    # --- dispatch --------------------------------------------------------------------
    def handle(self, request: Request) -> Response:
        with self._lock:
            self.log.append((request.method, request.full_path))
            if self.rate_limited:
                self.rate_limited -= 1
                return Response(json.dumps({"message": "You have exceeded a secondary rate limit"}),
                                status=403, content_type="application/json",
                                headers={"Retry-After": "1", "X-RateLimit-Remaining": "0"})
            return self._route(request)

    def _json(self, data, status: int = 200, headers: dict | None = None) -> Response:
        return Response(json.dumps(data), status=status, content_type="application/json",
                        headers=headers or {})

    def _route(self, request: Request) -> Response:
        path, method = request.path, request.method
        m = re.fullmatch(r"/repos/([^/]+/[^/]+)(/.*)?", path)
        if not m or m.group(1) not in self.repos:
            return self._json({"message": "Not Found"}, 404)
        r, rest = self.repos[m.group(1)], m.group(2) or ""
        body = json.loads(request.get_data() or b"{}") if method in ("POST", "PATCH") else {}
        if rest == "" and method == "GET":
            return self._json(self._repo_json(r))
        if mm := re.fullmatch(r"/pulls/(\d+)", rest):
            number = int(mm.group(1))
            return self._json(self._pull_json(r, number)) if number in r.pulls else self._json({}, 404)
        if mm := re.fullmatch(r"/issues/(\d+)", rest):
            return self._json(self._issue_json(r, int(mm.group(1))))
        if mm := re.fullmatch(r"/issues/(\d+)/comments", rest):
            number = int(mm.group(1))
            if method == "POST":
                if len(body.get("body", "")) > LIMIT:
                    return self._json({"message": "Validation Failed",
                                       "errors": [{"message": "body is too long (maximum is 65536 characters)"}]}, 422)
                login = request.headers.get("X-Fake-Login", "github-actions[bot]")
                c = self.add_comment(r.full_name, number, body["body"], login, "Bot")
                return self._json(self._comment_json(r, c), 201)
            return self._page(request, r, self.comments(r.full_name, number))
        if mm := re.fullmatch(r"/issues/comments/(\d+)(/reactions)?", rest):
            found = [c for cs in r.comments.values() for c in cs if c.id == int(mm.group(1))]
            if not found:
                return self._json({"message": "Not Found"}, 404)
            c = found[0]
            if mm.group(2):
                c.reactions.append((body["content"], "github-actions[bot]"))
                return self._json({"id": next(self._ids), "content": body["content"],
                                   "user": self._user("github-actions[bot]", "Bot")}, 201)
            if method == "PATCH":
                if len(body.get("body", "")) > LIMIT:
                    return self._json({"message": "Validation Failed"}, 422)
                c.body = body["body"]
            elif method == "DELETE":
                for cs in r.comments.values():
                    if c in cs:
                        cs.remove(c)
                return Response(status=204)
            return self._json(self._comment_json(r, c))
        if mm := re.fullmatch(r"/collaborators/([^/]+)/permission", rest):
            login = mm.group(1)
            if login not in r.permissions:
                return self._json({"message": f"{login} is not a user"}, 404)
            return self._json({"permission": r.permissions[login], "user": self._user(login)})
        return self._json({"message": f"fake has no route for {method} {path}"}, 404)

    def _page(self, request: Request, r: FakeRepo, items: list[Comment]) -> Response:
        query = parse_qs(urlparse(request.url).query)
        per_page = int(query.get("per_page", ["30"])[0])
        page = int(query.get("page", ["1"])[0])
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page: page * per_page]
        links = []
        url = f"{self.base}{request.path}?per_page={per_page}"
        if page < last:
            links.append(f'<{url}&page={page + 1}>; rel="next"')
            links.append(f'<{url}&page={last}>; rel="last"')
        if page > 1:
            links.append(f'<{url}&page=1>; rel="first"')
            links.append(f'<{url}&page={page - 1}>; rel="prev"')
        return self._json([self._comment_json(r, c) for c in chunk],
                          headers={"Link": ", ".join(links)} if links else {})
