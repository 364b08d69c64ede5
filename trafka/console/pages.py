"""The console's pages: server-rendered shells (Jinja2) that the shipped script (static/console.js)
fills from the JSON API and keeps live with server-sent events (/api/v1/stream/...).
No build step and no Node toolchain: the script and stylesheet are plain files in the package.
"""

from __future__ import annotations

from pathlib import Path

from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from trafka.console import views

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=str(HERE / "templates"))


def routes(broker) -> list:
    def page(name: str, title: str):
        async def render(request):
            context = {}
            params = dict(request.path_params)
            if "topic" in params and params["topic"] not in broker.logs.topics:
                raise LookupError(f"unknown topic {params['topic']!r}")
            if "partition" in params and params["partition"] >= broker.logs.topics[params["topic"]].partitions:
                raise LookupError(f"topic {params['topic']!r} has no partition {params['partition']}")
            if "group" in params and params["group"] not in views.all_groups(broker):
                raise LookupError(f"unknown group {params['group']!r}")
            if "topic" in params:
                context["partitions"] = broker.logs.topics[params["topic"]].partitions
            return templates.TemplateResponse(request, f"{name}.html", {
                "title": title.format(**params), "page": name, "params": params,
                "cluster_id": broker.cluster_id, "bootstrap": f"{broker.advertised_host}:{broker.advertised_port}",
                **context,
            })

        return render

    part = "/topics/{topic}/partitions/{partition:int}"
    return [
        Route("/", page("overview", "trafka")),
        Route(part, page("partition", "{topic}-{partition}")),
        Route(f"{part}/records", page("records", "records of {topic}-{partition}")),
        Route("/groups/{group}", page("group", "group {group}")),
        Route("/broker", page("broker", "broker")),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
